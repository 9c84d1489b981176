"""Fixed-window rate limits (``limits``), shared by API keys and the public pages.

Counters are in process memory, or in Redis when REHABREF_REDIS_URL is set so that every API
node shares them. Redis is reached through redis-py (a project dependency), not limits'
default client (coredis, which is not installed). If the storage is unreachable, a hit is not
counted and the request goes through: the limiter protects the service and must not take it
down; a warning is logged at most once a minute.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

from limits import RateLimitItem
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.errors import StorageError

log = logging.getLogger(__name__)

WARN_EVERY_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    limit: int
    window_seconds: int
    remaining: int
    # Whole seconds until the window resets (at least 1): the Retry-After value.
    reset_seconds: int


def storage_for(redis_url: str | None) -> Storage:
    if not redis_url:
        return MemoryStorage()
    return RedisStorage(
        f"async+{redis_url}",
        implementation="redispy",
        # Failures surface as StorageError, and a dead server costs half a second at most.
        wrap_exceptions=True,
        socket_timeout=0.5,
        socket_connect_timeout=0.5,
    )


class RateLimiter:
    """Counts hits against ``limits`` items in one storage."""

    def __init__(self, redis_url: str | None) -> None:
        self._storage = storage_for(redis_url)
        self._warned_at = -WARN_EVERY_SECONDS

    async def hit_all(self, items: Sequence[RateLimitItem], *identifiers: str) -> Verdict | None:
        """Count one hit against each of several limits (``10/second;300/minute``).

        Allowed when every one allows it. The verdict reported is the refusing limit that
        resets last (its wait is enough for all), or else the one with the least left.
        """
        verdicts = []
        for item in items:
            verdict = await self.hit(item, *identifiers)
            if verdict is None:
                return None
            verdicts.append(verdict)
        refused = [v for v in verdicts if not v.allowed]
        if refused:
            return max(refused, key=lambda v: v.reset_seconds)
        return min(verdicts, key=lambda v: v.remaining)

    async def hit(self, item: RateLimitItem, *identifiers: str) -> Verdict | None:
        """Count one hit for ``identifiers``; None when the storage could not be reached.

        Two storage operations (increment, then read the window's expiry): the count the
        increment returns is the one this hit is judged and reported by, where ``limits``'
        ``hit`` followed by ``get_window_stats`` costs a third (a Redis round trip each).
        """
        key = item.key_for(*identifiers)
        try:
            count = await self._storage.incr(key, item.get_expiry())
            resets_at = await self._storage.get_expiry(key)
        except StorageError as exc:
            now = time.monotonic()
            if now - self._warned_at >= WARN_EVERY_SECONDS:
                self._warned_at = now
                log.warning(
                    "rate limit storage unavailable; not limiting",
                    extra={"error_type": type(exc.storage_error).__name__},
                )
            return None
        return Verdict(
            allowed=count <= item.amount,
            limit=item.amount,
            window_seconds=item.get_expiry(),
            remaining=max(0, item.amount - count),
            reset_seconds=max(1, math.ceil(resets_at - time.time())),
        )
