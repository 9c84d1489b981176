"""Per-IP and per-link limits for the public pages: hosted form, console login, discharge
PDFs (``rehabref.rate_limiting``).

Memory storage by default; Redis when REHABREF_REDIS_URL is set, so several API nodes share
the counters. Only the limiter keys (an IP address or a link id) live in the storage, with a
short expiry; nothing is written to the database or the logs.
"""

from __future__ import annotations

from limits import RateLimitItem, parse_many

from rehabref.api_request import ApiRequest
from rehabref.client_address import client_address
from rehabref.config import Settings
from rehabref.rate_limiting import RateLimiter
from rehabref.services import services_of


class FormLimits:
    def __init__(self, settings: Settings, limiter: RateLimiter) -> None:
        self._limiter = limiter
        self.form_per_ip = parse_many(settings.form_rate_limit_ip)
        self.per_link = parse_many(settings.link_rate_limit)
        self.page_per_ip = parse_many(settings.page_rate_limit_ip)
        self.pdf_per_ip = parse_many(settings.pdf_rate_limit_ip)

    async def blocked(self, items: list[RateLimitItem], *keys: str) -> int | None:
        """Count a hit; None when allowed, else the seconds to wait."""
        verdict = await self._limiter.hit_all(items, *keys)
        if verdict is None or verdict.allowed:
            return None
        return verdict.reset_seconds


def limits_of(request: ApiRequest) -> FormLimits:
    state = request.app.state
    existing: FormLimits | None = getattr(state, "form_limits", None)
    if existing is None:
        services = services_of(request)
        existing = FormLimits(services.settings, services.rate_limiter)
        state.form_limits = existing
    return existing


def client_ip(request: ApiRequest) -> str:
    """The address per-IP limits count against (``rehabref.client_address``)."""
    return client_address(
        request.client.host if request.client else None,
        _forwarded_for(request),
        services_of(request).settings.trusted_proxies,
    )


def _forwarded_for(request: ApiRequest) -> list[str]:
    """Every ``X-Forwarded-For`` header, in order (the raw ASGI headers keep repeats)."""
    return [
        value.decode("latin-1")
        for name, value in request.scope["headers"]
        if name.lower() == b"x-forwarded-for"
    ]
