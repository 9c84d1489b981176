"""The Shape G branch of the create endpoint (same paths as V1; the body decides the shape).

Idempotency-Key is optional for Shape G and honoured exactly like V1 when sent: the first
response is stored with the referral in one transaction and replayed for 24 h.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Response
from sqlalchemy.exc import IntegrityError

from rehabref.errors import ApiError
from rehabref.idempotency import service as idempotency
from rehabref.partners.auth import Principal
from rehabref.referrals import service_g
from rehabref.referrals.schemas_g import ReferralCreateG
from rehabref.request_body import validate
from rehabref.services import Services

JSON = "application/json"
CREATE_OPERATION = "referrals.create"


def _context(services: Services) -> service_g.GContext:
    settings = services.settings
    return service_g.GContext(
        box=services.box,
        base_url=settings.base_url,
        assistant_ttl_seconds=settings.assistant_session_ttl_seconds,
        messaging=services.messaging,
        allow_private_targets=settings.allow_private_webhook_targets,
    )


def _replay(stored: idempotency.StoredResponse) -> Response[bytes]:
    return Response(
        content=stored.body,
        status_code=stored.status,
        media_type=JSON,
        headers={"Idempotent-Replayed": "true"},
    )


async def create_referral_g(
    services: Services, principal: Principal, body: dict[str, Any], key: str | None
) -> Response[bytes]:
    payload = validate(ReferralCreateG, body)
    ctx = _context(services)
    # Checks with network I/O (callback host resolution) run before the write transaction.
    grant = await service_g.check_request(principal=principal, request=payload, ctx=ctx)
    if key is None:
        try:
            async with services.db.write() as conn:
                created = await service_g.create_g(
                    conn, principal=principal, request=payload, grant=grant, ctx=ctx
                )
        except IntegrityError:
            raise service_g.duplicate_reference() from None
        return Response(content=_encode(created), status_code=201, media_type=JSON)
    request_print = idempotency.fingerprint(CREATE_OPERATION, body)
    with idempotency.claim_in_process(principal.partner_id, principal.environment, key):
        try:
            return await _create_once(services, principal, payload, grant, key, request_print)
        except IntegrityError:
            return await _after_conflict(services, principal, key, request_print)


def _encode(content: Any) -> bytes:
    return msgspec.json.encode(content)


async def _create_once(
    services: Services,
    principal: Principal,
    payload: ReferralCreateG,
    grant: Any,
    key: str,
    request_print: str,
) -> Response[bytes]:
    async with services.db.write() as conn:
        stored = await idempotency.lookup(
            conn,
            partner_id=principal.partner_id,
            environment=principal.environment,
            key=key,
            request_fingerprint=request_print,
        )
        if stored is not None:
            return _replay(stored)
        created = await service_g.create_g(
            conn, principal=principal, request=payload, grant=grant, ctx=_context(services)
        )
        response = idempotency.StoredResponse(201, _encode(created))
        await idempotency.remember(
            conn,
            partner_id=principal.partner_id,
            environment=principal.environment,
            key=key,
            request_fingerprint=request_print,
            response=response,
            ttl_seconds=services.settings.idempotency_ttl_seconds,
        )
    return Response(content=response.body, status_code=201, media_type=JSON)


async def _after_conflict(
    services: Services, principal: Principal, key: str, request_print: str
) -> Response[bytes]:
    """A concurrent request won a unique index race; answer as if we had come second."""
    async with services.db.read() as conn:
        winner = await idempotency.read_committed(
            conn, partner_id=principal.partner_id, environment=principal.environment, key=key
        )
    if winner is not None:
        winner_print, stored = winner
        if winner_print != request_print:
            raise ApiError(
                422,
                "idempotency_key_reused",
                "This Idempotency-Key was already used with a different request body.",
                fields={"Idempotency-Key": "Use a new key for a different request."},
            )
        return _replay(stored)
    raise service_g.duplicate_reference()
