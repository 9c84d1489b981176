"""Per-IP and per-link limits for the public pages: hosted form, console login, discharge
PDFs (``limits``).

Memory storage by default; Redis when REHABREF_REDIS_URL is set, so several API nodes share
the counters. Only the limiter keys (an IP address or a link id) live in the storage, with a
short expiry; nothing is written to the database or the logs.
"""

from __future__ import annotations

import math
import time
from typing import Any

from limits import RateLimitItem, parse
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import FixedWindowRateLimiter
from litestar import Request

from rehabref.config import Settings


class FormLimits:
    def __init__(self, settings: Settings) -> None:
        storage: Storage = (
            RedisStorage(f"async+{settings.redis_url}") if settings.redis_url else MemoryStorage()
        )
        self._limiter = FixedWindowRateLimiter(storage)
        self.form_per_ip = parse(settings.form_rate_limit_ip)
        self.per_link = parse(settings.link_rate_limit)
        self.page_per_ip = parse(settings.page_rate_limit_ip)
        self.pdf_per_ip = parse(settings.pdf_rate_limit_ip)

    async def blocked(self, item: RateLimitItem, *keys: str) -> int | None:
        """Count a hit; None when allowed, else the seconds to wait."""
        if await self._limiter.hit(item, *keys):
            return None
        stats = await self._limiter.get_window_stats(item, *keys)
        return max(1, math.ceil(stats.reset_time - time.time()))


def limits_of(request: Request[Any, Any, Any]) -> FormLimits:
    state = request.app.state
    existing: FormLimits | None = getattr(state, "form_limits", None)
    if existing is None:
        from rehabref.services import services_of

        existing = FormLimits(services_of(request).settings)
        state.form_limits = existing
    return existing


def client_ip(request: Request[Any, Any, Any]) -> str:
    return request.client.host if request.client else "unknown"
