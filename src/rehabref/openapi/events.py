"""OpenAPI description of webhook endpoints, event history, ops deliveries and the trigger."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from rehabref.events.catalogue import EVENT_TYPES
from rehabref.events.responses import (
    EventDetail,
    EventList,
    OpsEventDetail,
    OpsEventList,
    RedeliverResponse,
    TriggerWebhookResponse,
    WebhookEndpointList,
    WebhookEndpointRecord,
)
from rehabref.events.schemas import (
    OpsDeliveryList,
    TriggerWebhookRequest,
    WebhookEndpointCreate,
)
from rehabref.openapi.answers import AnswerType
from rehabref.openapi.operations import (
    OK_HEADERS,
    PAGE_PARAMETERS,
    Operation,
    errors,
    header,
    query,
)


def _path(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


_PAGE = list(PAGE_PARAMETERS)
_TYPE = query("type", {"type": "string", "enum": list(EVENT_TYPES)}, "Event type.")
_REFERRAL = query("referral_id", {"type": "string"}, "Events of one referral.")
_OPS = "Operator token (`rehabref operators create`); partner keys are refused."
_REDELIVER = (
    "Creates a new pending delivery of the same event (same event_id and body, fresh "
    "signature) to every endpoint subscribed now and to earlier extra targets "
    "(callback_url, sandbox target). 409 `no_webhook_target` when there is none."
)

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        operation_id="createWebhookEndpoint",
        method="post",
        paths=("/api/v1/partners/webhook-endpoints",),
        summary="Register a webhook endpoint",
        description=(
            "For the environment of the key used. `enabled_events` limits the event types "
            "(omit for all). The URL must be http(s) (https for live keys) and resolve to "
            "public addresses only; a refused URL is a 422 with `error.fields.url`."
        ),
        tag="webhooks",
        request_model=WebhookEndpointCreate,
        parameters=[header("Idempotency-Key", "Optional; honoured when sent.")],
        responses={
            201: ("Endpoint registered.", WebhookEndpointRecord, OK_HEADERS),
            **errors(400, 401, 403, 409, 413, 422, 429),
        },
    ),
    Operation(
        operation_id="listWebhookEndpoints",
        method="get",
        paths=("/api/v1/partners/webhook-endpoints",),
        summary="List webhook endpoints",
        description=(
            "Registered (not deleted) endpoints of the key's environment, newest first, "
            "each with its status (enabled or disabled) and health (circuit)."
        ),
        tag="webhooks",
        parameters=_PAGE,
        responses={
            200: ("Endpoints.", WebhookEndpointList, OK_HEADERS),
            **errors(401, 403, 422, 429),
        },
    ),
    Operation(
        operation_id="deleteWebhookEndpoint",
        method="delete",
        paths=("/api/v1/partners/webhook-endpoints/{endpoint_id}",),
        summary="Delete a webhook endpoint",
        description=(
            "Stops new deliveries to it and cancels the pending ones (they stay in the "
            "event's log with state `cancelled`)."
        ),
        tag="webhooks",
        parameters=[_path("endpoint_id")],
        responses={
            204: ("Deleted.", None, OK_HEADERS),
            **errors(401, 403, 404, 429),
        },
    ),
    Operation(
        operation_id="enableWebhookEndpoint",
        method="post",
        paths=("/api/v1/partners/webhook-endpoints/{endpoint_id}/enable",),
        summary="Re-enable a webhook endpoint",
        description=(
            "An endpoint that failed every delivery for 24 hours is disabled (`status` "
            "`disabled`, `disabled_reason` `failing`): its pending deliveries are cancelled "
            "and no new ones are queued. Enabling it starts it afresh (closed circuit). "
            "Deliveries cancelled meanwhile can be sent again with redeliver."
        ),
        tag="webhooks",
        parameters=[_path("endpoint_id")],
        responses={
            200: ("The endpoint, enabled.", WebhookEndpointRecord, OK_HEADERS),
            **errors(401, 403, 404, 429),
        },
    ),
    Operation(
        operation_id="listEvents",
        method="get",
        paths=("/api/v1/partners/events",),
        summary="List events",
        description="Events of the key's environment, newest first.",
        tag="webhooks",
        parameters=[_TYPE, _REFERRAL, *_PAGE],
        responses={200: ("A page of events.", EventList, OK_HEADERS), **errors(401, 403, 422, 429)},
    ),
    Operation(
        operation_id="getEvent",
        method="get",
        paths=("/api/v1/partners/events/{event_id}",),
        summary="Retrieve an event with its deliveries and attempts",
        description=(
            "Every delivery of the event with every attempt: time, HTTP status, latency, "
            "error, and the first 1 KiB of your endpoint's response."
        ),
        tag="webhooks",
        parameters=[_path("event_id")],
        responses={
            200: ("The event.", EventDetail, OK_HEADERS),
            **errors(401, 403, 404, 429),
        },
    ),
    Operation(
        operation_id="redeliverEvent",
        method="post",
        paths=("/api/v1/partners/events/{event_id}/redeliver",),
        summary="Redeliver an event",
        description=_REDELIVER,
        tag="webhooks",
        parameters=[
            _path("event_id"),
            header(
                "Idempotency-Key",
                "Optional; honoured when sent: a retry replays the first answer and queues "
                "nothing more.",
            ),
        ],
        responses={
            202: ("Deliveries queued.", RedeliverResponse, OK_HEADERS),
            **errors(400, 401, 403, 404, 409, 422, 429),
        },
    ),
    Operation(
        operation_id="triggerSandboxWebhook",
        method="post",
        paths=("/api/v1/sandbox/trigger-webhook",),
        summary="Send a test webhook (sandbox)",
        description=(
            "Only with a sandbox secret key (`sk_test_`; live and publishable keys get 403). "
            "Sends a realistic sample event of the given type to `target_url` through the "
            "normal outbox and worker, signed with your test webhook secret. `target_url` "
            "must be one of your registered, enabled test endpoints (or on an origin the "
            "operator allows). Unknown event type or refused URL: 422. At most 10 calls "
            "per minute per key: 429 with Retry-After."
        ),
        tag="sandbox",
        request_model=TriggerWebhookRequest,
        responses={
            202: ("Test event queued.", TriggerWebhookResponse, OK_HEADERS),
            **errors(400, 401, 403, 413, 422, 429),
        },
    ),
    Operation(
        operation_id="opsListEvents",
        method="get",
        paths=("/api/v1/ops/events",),
        summary="List events of all partners (ops)",
        description=_OPS,
        tag="ops",
        parameters=[
            query("partner_id", {"type": "string"}, "One partner."),
            query("environment", {"type": "string", "enum": ["test", "live"]}, "Environment."),
            _TYPE,
            _REFERRAL,
            *_PAGE,
        ],
        responses={
            200: ("A page of events.", OpsEventList, OK_HEADERS),
            **errors(401, 422),
        },
    ),
    Operation(
        operation_id="opsGetEvent",
        method="get",
        paths=("/api/v1/ops/events/{event_id}",),
        summary="Retrieve any event with deliveries and attempts (ops)",
        description=_OPS,
        tag="ops",
        parameters=[_path("event_id")],
        responses={200: ("The event.", OpsEventDetail, OK_HEADERS), **errors(401, 404)},
    ),
    Operation(
        operation_id="opsRedeliverEvent",
        method="post",
        paths=("/api/v1/ops/events/{event_id}/redeliver",),
        summary="Redeliver any event (ops)",
        description=f"{_OPS} {_REDELIVER}",
        tag="ops",
        parameters=[_path("event_id")],
        responses={
            202: ("Deliveries queued.", RedeliverResponse, OK_HEADERS),
            **errors(401, 404, 409),
        },
    ),
    Operation(
        operation_id="opsListDeliveries",
        method="get",
        paths=("/api/v1/ops/deliveries",),
        summary="List deliveries (ops), e.g. state=failed",
        description=_OPS,
        tag="ops",
        parameters=[
            query(
                "state",
                {"type": "string", "enum": ["pending", "succeeded", "failed", "cancelled"]},
                "Delivery state.",
            ),
            query("partner_id", {"type": "string"}, "One partner."),
            *_PAGE,
        ],
        responses={
            200: ("A page of deliveries.", OpsDeliveryList, OK_HEADERS),
            **errors(401, 422),
        },
    ),
)

SCHEMA_MODELS: tuple[type[BaseModel], ...] = (
    WebhookEndpointCreate,
    TriggerWebhookRequest,
    OpsDeliveryList,
)
ANSWER_TYPES: tuple[AnswerType, ...] = (
    WebhookEndpointRecord,
    WebhookEndpointList,
    EventList,
    EventDetail,
    RedeliverResponse,
    TriggerWebhookResponse,
    OpsEventList,
    OpsEventDetail,
)
