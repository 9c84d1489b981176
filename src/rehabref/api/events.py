"""Partner API: webhook endpoints, event history with delivery attempts, redelivery."""

from __future__ import annotations

import re
from typing import Any

import msgspec
from litestar import Response
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref import cursors
from rehabref.api.authentication import PARTNER_SECRET
from rehabref.cursors import page_params
from rehabref.errors import ApiError
from rehabref.events import history, subscriptions
from rehabref.events.catalogue import EVENT_TYPES
from rehabref.events.responses import EventList, RedeliverResponse, WebhookEndpointList
from rehabref.events.schemas import WebhookEndpointCreate
from rehabref.events.targets import check_target
from rehabref.idempotency import service as idempotency
from rehabref.idempotency.service import KeyOwner
from rehabref.plain_asgi import PlainRequest, PlainRoute
from rehabref.principal import Principal
from rehabref.request_body import json_object, validate
from rehabref.responses import json_response
from rehabref.scope import PartnerScope
from rehabref.services import services_of

_ENDPOINT_ID = re.compile(r"^whe_[0-9a-z]{26}$")


def event_type_param(query: Any, problems: dict[str, str]) -> str | None:
    event_type: str | None = query.get("type")
    if event_type is not None and event_type not in EVENT_TYPES:
        problems["type"] = f"Must be one of: {', '.join(EVENT_TYPES)}."
    return event_type


def not_found(what: str) -> ApiError:
    return ApiError(404, "not_found", f"No {what} with this identifier.")


async def create_webhook_endpoint(request: PlainRequest, principal: Principal) -> Response[bytes]:
    services = services_of(request)
    body = await json_object(request)
    key = idempotency.valid_key(request.headers.get("idempotency-key"), required=False)
    payload = validate(WebhookEndpointCreate, body)
    problem = await check_target(
        payload.url,
        environment=principal.environment,
        allow_loopback=services.settings.allow_loopback_webhook_targets,
    )
    if problem is not None:
        raise ApiError(
            422, "validation_error", "The webhook URL is refused.", fields={"url": problem}
        )
    scope = PartnerScope.of(principal)

    async def create(conn: AsyncConnection) -> bytes:
        if await subscriptions.count_active(conn, scope=scope) >= subscriptions.MAX_ENDPOINTS:
            raise ApiError(
                409,
                "conflict",
                f"At most {subscriptions.MAX_ENDPOINTS} active webhook endpoints per environment.",
            )
        record = await subscriptions.create_endpoint(
            conn, scope=scope, url=payload.url, enabled_events=payload.enabled_events
        )
        return msgspec.json.encode(record)

    return await services.idempotency.create(
        owner=KeyOwner.partner(principal),
        key=key,
        operation="webhook_endpoints.create",
        body=body,
        persist=services.idempotency.in_transaction(create),
        conflict=lambda: ApiError(409, "idempotency_in_flight", "Retry shortly with the same key."),
    )


async def list_webhook_endpoints(request: PlainRequest, principal: Principal) -> Response[bytes]:
    services = services_of(request)
    problems: dict[str, str] = {}
    limit, before_id = page_params(
        request.query_params, lambda cursor: cursors.decode_cursor(cursor, _ENDPOINT_ID), problems
    )
    if problems:
        raise ApiError(422, "validation_error", "Invalid query parameters.", fields=problems)
    async with services.db.read() as conn:
        data = await subscriptions.list_endpoints(conn, scope=PartnerScope.of(principal))
    # At most 20 active endpoints exist, so the page is cut here (newest first, as listed).
    if before_id is not None:
        data = [item for item in data if item.endpoint_id < before_id]
    page, has_more = data[:limit], len(data) > limit
    return json_response(
        WebhookEndpointList.after(
            page,
            has_more=has_more,
            last_id=page[-1].endpoint_id if page else None,
            encode=cursors.encode_cursor,
        )
    )


async def delete_webhook_endpoint(
    request: PlainRequest, principal: Principal, endpoint_id: str
) -> Response[bytes]:
    services = services_of(request)
    async with services.db.write() as conn:
        deleted = await subscriptions.delete_endpoint(
            conn, scope=PartnerScope.of(principal), endpoint_id=endpoint_id
        )
    if not deleted:
        raise not_found("webhook endpoint")
    return Response(content=b"", status_code=204)


async def enable_webhook_endpoint(
    request: PlainRequest, principal: Principal, endpoint_id: str
) -> Response[bytes]:
    """Re-enable an endpoint (e.g. one disabled after a day of failures), healthy again."""
    services = services_of(request)
    async with services.db.write() as conn:
        record = await subscriptions.enable_endpoint(
            conn, scope=PartnerScope.of(principal), endpoint_id=endpoint_id
        )
    if record is None:
        raise not_found("webhook endpoint")
    return json_response(record)


async def list_events(request: PlainRequest, principal: Principal) -> Response[bytes]:
    services = services_of(request)
    query = request.query_params
    problems: dict[str, str] = {}
    limit, before_id = page_params(query, history.decode_cursor, problems)
    event_type = event_type_param(query, problems)
    if problems:
        raise ApiError(422, "validation_error", "Invalid query parameters.", fields=problems)
    async with services.db.read() as conn:
        rows, has_more = await history.list_events(
            conn,
            scope=PartnerScope.of(principal),
            event_type=event_type,
            referral_id=query.get("referral_id"),
            before_id=before_id,
            limit=limit,
        )
    return json_response(
        EventList.after(
            [history.event_record(services.box.ring, row) for row in rows],
            has_more=has_more,
            last_id=rows[-1].id if rows else None,
            encode=history.encode_cursor,
        )
    )


async def get_event(request: PlainRequest, principal: Principal, event_id: str) -> Response[bytes]:
    services = services_of(request)
    async with services.db.read() as conn:
        row = await history.get_event(conn, scope=PartnerScope.of(principal), event_id=event_id)
        if row is None:
            raise not_found("event")
        deliveries = await history.deliveries_of(conn, services.box.ring, events=[row])
    return json_response(history.event_detail(services.box.ring, row, deliveries[row.id]))


async def redeliver_event(
    request: PlainRequest, principal: Principal, event_id: str
) -> Response[bytes]:
    services = services_of(request)
    # Optional, honoured when sent: a retried redeliver then queues its deliveries once.
    key = idempotency.valid_key(request.headers.get("idempotency-key"), required=False)

    async def redeliver(conn: AsyncConnection) -> bytes:
        row = await history.get_event(conn, scope=PartnerScope.of(principal), event_id=event_id)
        if row is None:
            raise not_found("event")
        deliveries = await history.redeliver(conn, event=row)
        if not deliveries:
            raise no_target()
        return msgspec.json.encode(RedeliverResponse(event_id=event_id, deliveries=deliveries))

    return await services.idempotency.create(
        owner=KeyOwner.partner(principal),
        key=key,
        # The event is part of the operation: one key for two events is a reuse (422).
        operation=f"events.redeliver:{event_id}",
        body={},
        persist=services.idempotency.in_transaction(redeliver),
        conflict=no_target,
        status=202,
    )


def no_target() -> ApiError:
    return ApiError(
        409,
        "no_webhook_target",
        "No webhook endpoint is subscribed to this event; register one first.",
    )


ROUTES = [
    PlainRoute(
        "POST", "/api/v1/partners/webhook-endpoints", create_webhook_endpoint, auth=PARTNER_SECRET
    ),
    PlainRoute(
        "GET", "/api/v1/partners/webhook-endpoints", list_webhook_endpoints, auth=PARTNER_SECRET
    ),
    PlainRoute(
        "DELETE",
        "/api/v1/partners/webhook-endpoints/{endpoint_id}",
        delete_webhook_endpoint,
        auth=PARTNER_SECRET,
    ),
    PlainRoute(
        "POST",
        "/api/v1/partners/webhook-endpoints/{endpoint_id}/enable",
        enable_webhook_endpoint,
        auth=PARTNER_SECRET,
    ),
    PlainRoute(
        "GET", "/api/v1/partners/events", list_events, auth=PARTNER_SECRET, audit="events.listed"
    ),
    PlainRoute(
        "GET",
        "/api/v1/partners/events/{event_id}",
        get_event,
        auth=PARTNER_SECRET,
        audit="event.read",
    ),
    PlainRoute(
        "POST", "/api/v1/partners/events/{event_id}/redeliver", redeliver_event, auth=PARTNER_SECRET
    ),
]
