"""How partner API routes authenticate (``PlainRoute(auth=...)``), wired into the router in
app.py: ``PARTNER_SECRET``, a secret API key resolved by ``partners.auth.Authenticator``
(its cache, the per-key rate limit, the 401/403/429 answers)."""

from __future__ import annotations

from collections.abc import Mapping

from rehabref.plain_asgi import Authentication, PlainRequest, RouteAuth
from rehabref.principal import Principal
from rehabref.services import services_of

PARTNER_SECRET: RouteAuth[Principal] = RouteAuth("partner secret key")


async def _secret_key(request: PlainRequest, params: Mapping[str, str]) -> Principal:
    return await services_of(request).auth.authenticate(request)


AUTHENTICATIONS = (Authentication(PARTNER_SECRET, _secret_key),)
