"""The Shape G branch of the create endpoint (same paths as V1; the body decides the shape).

Idempotency-Key is optional for Shape G and honoured exactly like V1 when sent: the first
response is stored with the referral (one statement, or one transaction on SQLite) and replayed
for 24 h. The patient is messaged while the create is planned, so a replay or a used
``partner_reference`` is answered from a read before planning and messages nobody.
"""

from __future__ import annotations

from typing import Any

from litestar import Response

from rehabref.clock import utcnow
from rehabref.idempotency.flow import answered_before, create_idempotently
from rehabref.idempotency.service import KeyClaim
from rehabref.principal import Principal
from rehabref.referrals import store
from rehabref.referrals.schemas_g import ReferralCreateG
from rehabref.request_body import validate
from rehabref.scope import PartnerScope
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
    # Checks with network I/O (callback host resolution) run before anything is written.
    grant = await created_g.check_request(principal=principal, request=payload, ctx=ctx)

    async def persist(claim: KeyClaim | None) -> bytes:
        # The patient is messaged while planning, before the write: a replay, or a reference
        # already used, is answered from a read first so that it messages nobody.
        async with services.db.read() as conn:
            if claim is not None:
                await answered_before(conn, claim)
            if payload.partner_reference is not None and await store.find_id_by_partner_reference(
                conn,
                scope=PartnerScope.of(principal),
                partner_reference=payload.partner_reference,
            ):
                raise created_g.duplicate_reference()
        plan = await created_g.plan_g(
            principal=principal,
            request=payload,
            grant=grant,
            ctx=ctx,
            now=utcnow(),
            on_created=services.referral_created,
        )
        return await services.create_store.persist(plan, claim)

    return await create_idempotently(
        services.db,
        principal=principal,
        key=key,
        operation=CREATE_OPERATION,
        body=body,
        ttl_seconds=services.settings.idempotency_ttl_seconds,
        persist=persist,
        conflict=created_g.duplicate_reference,
    )
