"""Bearer API key authentication with a short in-process cache, and per-key rate limits."""

from __future__ import annotations

from limits import parse_many
from sqlalchemy import bindparam, select

from rehabref.api_request import ApiRequest
from rehabref.db import Database, table
from rehabref.errors import ApiError
from rehabref.expiring_cache import ExpiringCache
from rehabref.fastsql import Statement, fetch_one
from rehabref.logging import partner_id_var
from rehabref.partners.keys import hash_key, parse_key
from rehabref.principal import Principal
from rehabref.rate_limiting import RateLimiter
from rehabref.tables.partners import ApiKey, Partner

_keys = table(ApiKey)
_partners = table(Partner)

# An active key and its partner, by key hash.
_LOOKUP = Statement(
    select(
        _keys.c.id,
        _keys.c.environment,
        _keys.c.kind,
        _partners.c.id.label("partner_id"),
        _partners.c.name,
        _partners.c.contract,
        _partners.c.show_payments,
        _partners.c.commission_bps,
        _partners.c.commission_fixed_minor,
    )
    .join(_partners, _partners.c.id == _keys.c.partner_id)
    .where(_keys.c.revoked_at.is_(None), _keys.c.key_hash == bindparam("key_hash"))
)


def _unauthenticated() -> ApiError:
    return ApiError(401, "unauthenticated", "Missing or invalid API key.")


class Authenticator:
    def __init__(
        self, db: Database, *, cache_seconds: float, rate_limit: str, limiter: RateLimiter
    ) -> None:
        self._db = db
        # By key hash; "no such key" (None) is cached too.
        self._principals: ExpiringCache[str, Principal | None] = ExpiringCache(
            ttl_seconds=cache_seconds
        )
        self._limits = parse_many(rate_limit)
        self._limiter = limiter

    async def _resolve(self, key: str) -> Principal | None:
        digest = hash_key(key)
        return await self._principals.get(digest, self._look_up)

    async def _look_up(self, digest: str) -> Principal | None:
        # The hot-path connections: already open, unlike the general pool's, which a worker
        # rarely uses and would have to connect first.
        async with self._db.fast_read() as conn:
            row = await fetch_one(conn, _LOOKUP, {"key_hash": digest})
        if row is None:
            return None
        return Principal(
            key_id=row.id,
            partner_id=row.partner_id,
            partner_name=row.name,
            environment=row.environment,
            kind=row.kind,
            contract=row.contract,
            show_payments=bool(row.show_payments),
            commission_bps=row.commission_bps,
            commission_fixed_minor=row.commission_fixed_minor,
        )

    def forget(self) -> None:
        self._principals.clear()

    async def authenticate(self, request: ApiRequest, *, secret_only: bool = True) -> Principal:
        header = request.headers.get("authorization", "")
        scheme, _, key = header.partition(" ")
        key = key.strip()
        if scheme.lower() != "bearer" or parse_key(key) is None:
            raise _unauthenticated()
        principal = await self._resolve(key)
        if principal is None:
            raise _unauthenticated()
        request.scope["state"]["partner_id"] = principal.partner_id
        partner_id_var.set(principal.partner_id)
        await self._check_rate(request, principal.key_id)
        if secret_only and principal.kind != "secret":
            raise ApiError(
                403, "forbidden", "Publishable keys cannot call this endpoint; use a secret key."
            )
        return principal

    async def _check_rate(self, request: ApiRequest, key_id: str) -> None:
        verdict = await self._limiter.hit_all(self._limits, key_id)
        if verdict is None:  # the counters' storage is unreachable: not limiting
            return
        headers = {
            "RateLimit-Limit": str(verdict.limit),
            "RateLimit-Remaining": str(verdict.remaining),
            "RateLimit-Reset": str(verdict.reset_seconds),
        }
        if verdict.allowed:
            # Added to the response by the request context middleware.
            request.scope["state"]["rate_limit_headers"] = headers
            return
        raise ApiError(
            429,
            "rate_limited",
            f"Rate limit of {verdict.limit} requests per {verdict.window_seconds} s "
            f"exceeded; retry after {verdict.reset_seconds} seconds.",
            headers={"Retry-After": str(verdict.reset_seconds), **headers},
        )
