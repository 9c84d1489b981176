"""Sandbox webhook trigger (spec 4.7): a realistic test event sent to a target URL.

Only sandbox secret keys (``sk_test_``) may call it, at most 10 times a minute per key, and
only to the partner's registered test endpoints or an allowed origin (``trigger_targets.py``).
The event goes through the same outbox and worker as real events (signed with the partner's
test secret, same target rules, same retries, same fair share of the worker) and shows up in
the partner's event history; it goes to ``target_url`` only, not to the registered endpoints.
"""

from __future__ import annotations

from typing import cast

import msgspec
from limits import parse_many
from litestar import Response
from sqlalchemy import select

from rehabref.api.authentication import PARTNER_SECRET
from rehabref.db import table
from rehabref.errors import ApiError
from rehabref.events.catalogue import EventType
from rehabref.events.outbox import NewEvent, record_events
from rehabref.events.responses import TriggerWebhookResponse
from rehabref.events.samples import sample_data
from rehabref.events.schemas import TriggerWebhookRequest
from rehabref.events.targets import check_target
from rehabref.plain_asgi import PlainRequest, PlainRoute
from rehabref.principal import Principal
from rehabref.request_body import json_object, validate
from rehabref.sandbox.trigger_targets import target_allowed
from rehabref.scope import PartnerScope
from rehabref.services import Services, services_of
from rehabref.tables.events import Delivery, WebhookEndpoint

_deliveries = table(Delivery)
_endpoints = table(WebhookEndpoint)


async def check_rate(services: Services, principal: Principal) -> None:
    limits = parse_many(services.settings.sandbox_trigger_rate_limit)
    verdict = await services.rate_limiter.hit_all(limits, "sandbox-trigger", principal.key_id)
    if verdict is None or verdict.allowed:  # None: the counters are unreachable
        return
    raise ApiError(
        429,
        "rate_limited",
        f"At most {verdict.limit} sandbox webhook triggers per {verdict.window_seconds} s "
        f"per key; retry after {verdict.reset_seconds} seconds.",
        headers={"Retry-After": str(verdict.reset_seconds)},
    )


async def registered_urls(services: Services, principal: Principal) -> list[str]:
    w = _endpoints
    async with services.db.read() as conn:
        rows = await conn.execute(
            PartnerScope.of(principal)
            .select(w, w.c.url)
            .where(w.c.active.is_(True), w.c.disabled_at.is_(None))
        )
        return [str(url) for (url,) in rows]


async def trigger_webhook(request: PlainRequest, principal: Principal) -> Response[bytes]:
    services = services_of(request)
    if principal.environment != "test":
        raise ApiError(
            403, "forbidden", "The webhook trigger works only with a sandbox secret key (sk_test_)."
        )
    await check_rate(services, principal)
    payload = validate(TriggerWebhookRequest, await json_object(request))
    if not target_allowed(
        payload.target_url,
        registered=await registered_urls(services, principal),
        origins=services.settings.sandbox_trigger_origins,
    ):
        raise ApiError(
            422,
            "validation_error",
            "The target URL is refused.",
            fields={
                "target_url": "Must be one of your registered test webhook endpoints "
                "(POST /api/v1/partners/webhook-endpoints with a sandbox key)."
            },
        )
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
            services.box.ring,
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
    body = TriggerWebhookResponse(
        event_id=event_id,
        delivery_id=delivery_id,
        type=cast(EventType, payload.event),
        target_url=payload.target_url,
    )
    return Response(
        content=msgspec.json.encode(body), status_code=202, media_type="application/json"
    )


ROUTES = [
    PlainRoute("POST", "/api/v1/sandbox/trigger-webhook", trigger_webhook, auth=PARTNER_SECRET),
]
