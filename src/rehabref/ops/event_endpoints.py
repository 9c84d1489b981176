"""Ops API (operator token): events and deliveries across partners, redelivery."""

from __future__ import annotations

from litestar import Response

from rehabref.api.events import event_type_param, no_target, not_found
from rehabref.cursors import page_envelope, page_params
from rehabref.errors import ApiError
from rehabref.events import history
from rehabref.events.responses import OpsEventList, RedeliverResponse
from rehabref.ops.auth import OPERATOR, OperatorPrincipal
from rehabref.plain_asgi import PlainRequest, PlainRoute
from rehabref.responses import json_response
from rehabref.scope import OperatorScope
from rehabref.services import services_of

DELIVERY_STATES = ("pending", "succeeded", "failed", "cancelled")


async def ops_list_events(request: PlainRequest, operator: OperatorPrincipal) -> Response[bytes]:
    query = request.query_params
    problems: dict[str, str] = {}
    limit, before_id = page_params(query, history.decode_cursor, problems)
    event_type = event_type_param(query, problems)
    environment = query.get("environment")
    if environment is not None and environment not in {"test", "live"}:
        problems["environment"] = "Must be test or live."
    if problems:
        raise ApiError(422, "validation_error", "Invalid query parameters.", fields=problems)
    services = services_of(request)
    async with services.db.read() as conn:
        rows, has_more = await history.list_events(
            conn,
            scope=OperatorScope(partner_id=query.get("partner_id"), environment=environment),
            event_type=event_type,
            referral_id=query.get("referral_id"),
            before_id=before_id,
            limit=limit,
        )
    return json_response(
        OpsEventList.after(
            [history.ops_event_record(services.box.ring, row) for row in rows],
            has_more=has_more,
            last_id=rows[-1].id if rows else None,
            encode=history.encode_cursor,
        )
    )


async def ops_get_event(
    request: PlainRequest, operator: OperatorPrincipal, event_id: str
) -> Response[bytes]:
    services = services_of(request)
    async with services.db.read() as conn:
        row = await history.get_event(conn, scope=OperatorScope(), event_id=event_id)
        if row is None:
            raise not_found("event")
        deliveries = await history.deliveries_of(conn, services.box.ring, events=[row])
    return json_response(history.ops_event_detail(services.box.ring, row, deliveries[row.id]))


async def ops_redeliver_event(
    request: PlainRequest, operator: OperatorPrincipal, event_id: str
) -> Response[bytes]:
    async with services_of(request).db.write() as conn:
        row = await history.get_event(conn, scope=OperatorScope(), event_id=event_id)
        if row is None:
            raise not_found("event")
        deliveries = await history.redeliver(conn, event=row)
    if not deliveries:
        raise no_target()
    return json_response(RedeliverResponse(event_id=event_id, deliveries=deliveries), 202)


async def ops_list_deliveries(
    request: PlainRequest, operator: OperatorPrincipal
) -> Response[bytes]:
    query = request.query_params
    problems: dict[str, str] = {}
    limit, before_id = page_params(query, history.decode_cursor, problems)
    state = query.get("state")
    if state is not None and state not in DELIVERY_STATES:
        problems["state"] = f"Must be one of: {', '.join(DELIVERY_STATES)}."
    if problems:
        raise ApiError(422, "validation_error", "Invalid query parameters.", fields=problems)
    async with services_of(request).db.read() as conn:
        items, has_more = await history.list_deliveries(
            conn,
            scope=OperatorScope(partner_id=query.get("partner_id")),
            state=state,
            before_id=before_id,
            limit=limit,
        )
    return json_response(
        page_envelope(
            items,
            has_more=has_more,
            last_id=items[-1]["delivery_id"] if items else None,
            encode=history.encode_cursor,
        )
    )


ROUTES = [
    PlainRoute("GET", "/api/v1/ops/events", ops_list_events, auth=OPERATOR, audit="events.listed"),
    PlainRoute(
        "GET", "/api/v1/ops/events/{event_id}", ops_get_event, auth=OPERATOR, audit="event.read"
    ),
    PlainRoute(
        "POST", "/api/v1/ops/events/{event_id}/redeliver", ops_redeliver_event, auth=OPERATOR
    ),
    PlainRoute("GET", "/api/v1/ops/deliveries", ops_list_deliveries, auth=OPERATOR),
]
