"""The Shape G branch of the create endpoint (same paths as V1; the body decides the shape).

Idempotency-Key is optional for Shape G and honoured exactly like V1 when sent: the first
response is stored with the referral in one transaction and replayed for 24 h.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Response
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.idempotency.flow import create_idempotently
from rehabref.principal import Principal
from rehabref.referrals.schemas_g import ReferralCreateG
from rehabref.request_body import validate
from rehabref.services import Services
from rehabref.workflows import referral_created_g as created_g

CREATE_OPERATION = "referrals.create"


def _context(services: Services) -> created_g.GContext:
    settings = services.settings
    return created_g.GContext(
        box=services.box,
        base_url=settings.base_url,
        assistant_ttl_seconds=settings.assistant_session_ttl_seconds,
        messaging=services.messaging,
        allow_private_targets=settings.allow_private_webhook_targets,
    )


async def create_referral_g(
    services: Services, principal: Principal, body: dict[str, Any], key: str | None
) -> Response[bytes]:
    payload = validate(ReferralCreateG, body)
    ctx = _context(services)
    # Checks with network I/O (callback host resolution) run before the write transaction.
    grant = await created_g.check_request(principal=principal, request=payload, ctx=ctx)

    async def create(conn: AsyncConnection) -> bytes:
        created = await created_g.create_g(
            conn,
            principal=principal,
            request=payload,
            grant=grant,
            ctx=ctx,
            on_created=services.referral_created,
        )
        return msgspec.json.encode(created)

    return await create_idempotently(
        services.db,
        principal=principal,
        key=key,
        operation=CREATE_OPERATION,
        body=body,
        ttl_seconds=services.settings.idempotency_ttl_seconds,
        create=create,
        conflict=created_g.duplicate_reference,
    )
