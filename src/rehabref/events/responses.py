"""The webhook-endpoint and event answers as msgspec Structs: the bodies the API encodes and
the schemas the OpenAPI document shows (``openapi/events.py``).

Field order is the JSON key order; a None field is written as ``null``. Timestamps are the
interface's text (``clock.iso``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from rehabref.cursors import Page
from rehabref.events.catalogue import EventType

Timestamp = Annotated[str, msgspec.Meta(extra_json_schema={"format": "date-time"})]
Environment = Literal["test", "live"]
DeliveryState = Literal["pending", "succeeded", "failed", "cancelled"]


class EndpointHealth(msgspec.Struct, frozen=True):
    circuit: Annotated[
        Literal["closed", "open", "half_open"],
        msgspec.Meta(
            description="closed: delivering normally; open: backed off after consecutive "
            "failures, nothing is sent until circuit_open_until; half_open: one delivery at a "
            "time is tried, and its success closes the circuit."
        ),
    ]
    consecutive_failures: int
    failing_since: Annotated[
        Timestamp | None,
        msgspec.Meta(
            description="First failure of the current run of failures; null while healthy."
        ),
    ]
    circuit_open_until: Timestamp | None


class WebhookEndpointRecord(msgspec.Struct, frozen=True):
    endpoint_id: str
    url: str
    environment: Environment
    enabled_events: list[EventType] | None
    active: bool
    status: Annotated[
        Literal["enabled", "disabled"],
        msgspec.Meta(
            description="disabled: no deliveries are queued or sent (re-enable with "
            "POST .../{endpoint_id}/enable)."
        ),
    ]
    disabled_reason: Annotated[
        Literal["failing"] | None,
        msgspec.Meta(description="failing: every delivery failed for 24 hours."),
    ]
    disabled_at: Timestamp | None
    health: EndpointHealth
    created_at: Timestamp


class WebhookEndpointList(Page[WebhookEndpointRecord], frozen=True):
    pass


class EventRecord(msgspec.Struct, frozen=True):
    event_id: str
    type: EventType
    occurred_at: Timestamp
    referral_id: str | None
    data: Annotated[dict[str, Any], msgspec.Meta(extra_json_schema={"additionalProperties": True})]


class EventList(Page[EventRecord], frozen=True):
    pass


class AttemptRecord(msgspec.Struct, frozen=True):
    attempted_at: Timestamp
    status_code: int | None
    latency_ms: int | None
    error: str | None
    response_excerpt: Annotated[
        str | None, msgspec.Meta(description="First 1 KiB of the response body.")
    ]
    note: Annotated[
        str | None,
        msgspec.Meta(
            description="What this attempt was when it was not an ordinary send: the copies "
            "of sandbox test phone 5 (first copy, simulated HTTP 500, retry, stale replay). "
            "null for an ordinary attempt."
        ),
    ]


class DeliveryRecord(msgspec.Struct, frozen=True):
    delivery_id: str
    endpoint_id: str | None
    target_url: str
    state: DeliveryState
    attempt_count: int
    next_attempt_at: Timestamp | None
    last_status_code: int | None
    created_at: Timestamp
    completed_at: Timestamp | None
    attempts: list[AttemptRecord]


class EventDetail(EventRecord, frozen=True):
    deliveries: list[DeliveryRecord]


class NewDelivery(msgspec.Struct, frozen=True):
    delivery_id: str
    target_url: str


class RedeliverResponse(msgspec.Struct, frozen=True):
    event_id: str
    deliveries: list[NewDelivery]


# The sandbox trigger's 202 body (sandbox/trigger.py).
class TriggerWebhookResponse(msgspec.Struct, frozen=True):
    event_id: str
    delivery_id: str
    type: EventType
    target_url: str


# What coordinators see (ops/event_endpoints.py): the event with its owner.


class OpsEventRecord(EventRecord, frozen=True):
    partner_id: str
    environment: Environment


class OpsEventList(Page[OpsEventRecord], frozen=True):
    pass


class OpsEventDetail(OpsEventRecord, frozen=True):
    deliveries: list[DeliveryRecord]
