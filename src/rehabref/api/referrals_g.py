"""The Shape G branch of the create endpoint (same paths as V1; the body decides the shape).

Idempotency-Key is optional for Shape G and honoured exactly like V1 when sent: the first
response is stored with the referral (one statement, or one transaction on SQLite) and replayed
for 24 h. The patient's WhatsApp message is written with the referral and tried once right
after the commit, with a short timeout: ``messaging_intake.dispatched`` says whether the
provider took it (the stored answer is amended to match, so replays say the same). A message
the provider did not take in time stays queued for the worker.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import msgspec
from litestar import Response

from rehabref.clock import utcnow
from rehabref.idempotency.service import KeyOwner, amend_response
from rehabref.principal import Principal
from rehabref.referrals.responses import ReferralCreatedG
from rehabref.referrals.schemas_g import ReferralCreateG
from rehabref.request_body import validate
from rehabref.responses import JSON
from rehabref.services import Services
from rehabref.workflows import referral_created_g as created_g

CREATE_OPERATION = "referrals.create"
# How long the create waits for the provider to take the patient's message.
DISPATCH_TIMEOUT_SECONDS = 3.0


def _context(services: Services) -> created_g.GContext:
    settings = services.settings
    return created_g.GContext(
        box=services.box,
        base_url=settings.base_url,
        assistant_ttl_seconds=settings.assistant_session_ttl_seconds,
        channels=services.channels,
        allow_loopback_targets=settings.allow_loopback_webhook_targets,
    )


async def create_referral_g(
    services: Services, principal: Principal, body: dict[str, Any], key: str | None
) -> Response[bytes]:
    payload = validate(ReferralCreateG, body)
    ctx = _context(services)
    # Checks with network I/O (callback host resolution) run before anything is written.
    grant = await created_g.check_request(principal=principal, request=payload, ctx=ctx)
    plan = created_g.plan_g(
        principal=principal,
        request=payload,
        grant=grant,
        ctx=ctx,
        now=utcnow(),
        on_created=services.created_hooks(principal.environment),
    )
    response = await services.idempotency.create(
        owner=KeyOwner.partner(principal),
        key=key,
        operation=CREATE_OPERATION,
        body=body,
        persist=partial(services.create_store.persist, plan),
        conflict=created_g.duplicate_reference,
    )
    waiting = [m for m in plan.messages if m["state"] == "pending"]
    if response.status_code != 201 or response.headers.get("Idempotent-Replayed") or not waiting:
        return response
    if not await services.messages.send_now(waiting[0]["id"], timeout=DISPATCH_TIMEOUT_SECONDS):
        return response
    answer = msgspec.json.decode(plan.response, type=ReferralCreatedG)
    content = msgspec.json.encode(
        msgspec.structs.replace(
            answer,
            messaging_intake=msgspec.structs.replace(answer.messaging_intake, dispatched=True),
        )
    )
    if key is not None:
        async with services.db.write() as conn:
            await amend_response(
                conn,
                services.box.ring,
                partner_id=principal.partner_id,
                environment=principal.environment,
                key=key,
                body=content,
            )
    return Response(content=content, status_code=201, media_type=JSON)
