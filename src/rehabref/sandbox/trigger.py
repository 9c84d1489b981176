"""Sandbox webhook trigger (spec 4.7): a realistic test event sent to any target URL.

Only sandbox secret keys (``sk_test_``) may call it. The event goes through the same outbox
and worker as real events (signed with the partner's test secret, same target rules, same
retries) and shows up in the partner's event history; it goes to ``target_url`` only, not to
the registered endpoints.
"""

from __future__ import annotations

import msgspec
from litestar import Response
from sqlalchemy import select

from rehabref.db import table
from rehabref.errors import ApiError
from rehabref.events.outbox import NewEvent, record_events
from rehabref.events.samples import sample_data
from rehabref.events.schemas import TriggerWebhookRequest
from rehabref.events.targets import check_target
from rehabref.plain_asgi import PlainRequest, PlainRoute
from rehabref.request_body import json_object, validate
from rehabref.services import services_of
from rehabref.tables.events import Delivery

_deliveries = table(Delivery)


async def trigger_webhook(request: PlainRequest) -> Response[bytes]:
    services = services_of(request)
    principal = await services.auth.authenticate(request)
    if principal.environment != "test":
        raise ApiError(
            403, "forbidden", "The webhook trigger works only with a sandbox secret key (sk_test_)."
        )
    payload = validate(TriggerWebhookRequest, await json_object(request))
    problem = await check_target(
        payload.target_url,
        environment="test",
        allow_loopback=services.settings.allow_loopback_webhook_targets,
    )
    if problem is not None:
        raise ApiError(
            422, "validation_error", "The target URL is refused.", fields={"target_url": problem}
        )
    referral_id, data = sample_data(
        payload.event, contract=principal.contract, show_payments=principal.show_payments
    )
    async with services.db.write() as conn:
        (event_id,) = await record_events(
            conn,
            partner_id=principal.partner_id,
            environment="test",
            events=[
                NewEvent(
                    payload.event,
                    data,
                    referral_id,
                    extra_targets=(payload.target_url,),
                    only_extra_targets=True,
                )
            ],
        )
        delivery_id = (
            await conn.execute(select(_deliveries.c.id).where(_deliveries.c.event_id == event_id))
        ).scalar_one()
    body = {
        "event_id": event_id,
        "delivery_id": delivery_id,
        "type": payload.event,
        "target_url": payload.target_url,
    }
    return Response(
        content=msgspec.json.encode(body), status_code=202, media_type="application/json"
    )


ROUTES = [
    PlainRoute("POST", "/api/v1/sandbox/trigger-webhook", trigger_webhook),
]
