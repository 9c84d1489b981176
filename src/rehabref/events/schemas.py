"""Request and response models of the webhook, event and sandbox trigger endpoints."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rehabref.events.catalogue import EVENT_TYPES, EventType

_strict = ConfigDict(extra="forbid", str_strip_whitespace=True)


def _known_type(value: str) -> str:
    if value not in EVENT_TYPES:
        raise ValueError(f"Unknown event type; use one of: {', '.join(EVENT_TYPES)}.")
    return value


class WebhookEndpointCreate(BaseModel):
    model_config = _strict

    url: str = Field(min_length=1, max_length=2048, examples=["https://partner.example/hooks"])
    enabled_events: list[str] | None = Field(
        default=None,
        min_length=1,
        max_length=len(EVENT_TYPES),
        description="Event types to receive; omit or null for every type.",
        json_schema_extra={"items": {"enum": list(EVENT_TYPES)}},
    )

    @field_validator("enabled_events")
    @classmethod
    def _catalogue_types(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        for item in value:
            _known_type(item)
        return list(dict.fromkeys(value))


class EndpointHealth(BaseModel):
    circuit: Literal["closed", "open", "half_open"] = Field(
        description="closed: delivering normally; open: backed off after consecutive "
        "failures, nothing is sent until circuit_open_until; half_open: one delivery at a "
        "time is tried, and its success closes the circuit."
    )
    consecutive_failures: int
    failing_since: datetime | None = Field(
        description="First failure of the current run of failures; null while healthy."
    )
    circuit_open_until: datetime | None


class WebhookEndpointRecord(BaseModel):
    endpoint_id: str
    url: str
    environment: Literal["test", "live"]
    enabled_events: list[EventType] | None
    active: bool
    status: Literal["enabled", "disabled"] = Field(
        description="disabled: no deliveries are queued or sent (re-enable with "
        "POST .../{endpoint_id}/enable)."
    )
    disabled_reason: Literal["failing"] | None = Field(
        description="failing: every delivery failed for 24 hours."
    )
    disabled_at: datetime | None
    health: EndpointHealth
    created_at: datetime


class WebhookEndpointList(BaseModel):
    data: list[WebhookEndpointRecord]
    has_more: bool
    next_cursor: str | None


class EventRecord(BaseModel):
    event_id: str
    type: EventType
    occurred_at: datetime
    referral_id: str | None
    data: dict[str, Any]


class EventList(BaseModel):
    data: list[EventRecord]
    has_more: bool
    next_cursor: str | None


class AttemptRecord(BaseModel):
    attempted_at: datetime
    status_code: int | None
    latency_ms: int | None
    error: str | None
    response_excerpt: str | None = Field(description="First 1 KiB of the response body.")
    note: str | None = Field(
        description="What this attempt was when it was not an ordinary send: the copies of "
        "sandbox test phone 5 (first copy, simulated HTTP 500, retry, stale replay). "
        "null for an ordinary attempt.",
    )


class DeliveryRecord(BaseModel):
    delivery_id: str
    endpoint_id: str | None
    target_url: str
    state: Literal["pending", "succeeded", "failed", "cancelled"]
    attempt_count: int
    next_attempt_at: datetime | None
    last_status_code: int | None
    created_at: datetime
    completed_at: datetime | None
    attempts: list[AttemptRecord]


class EventDetail(EventRecord):
    deliveries: list[DeliveryRecord]


class NewDelivery(BaseModel):
    delivery_id: str
    target_url: str


class RedeliverResponse(BaseModel):
    event_id: str
    deliveries: list[NewDelivery]


class OpsEventRecord(EventRecord):
    partner_id: str
    environment: Literal["test", "live"]


class OpsEventList(BaseModel):
    data: list[OpsEventRecord]
    has_more: bool
    next_cursor: str | None


class OpsEventDetail(OpsEventRecord):
    deliveries: list[DeliveryRecord]


class OpsDeliveryRecord(BaseModel):
    delivery_id: str
    event_id: str
    event_type: EventType
    partner_id: str
    environment: Literal["test", "live"]
    endpoint_id: str | None
    target_url: str
    state: Literal["pending", "succeeded", "failed", "cancelled"]
    attempt_count: int
    next_attempt_at: datetime | None
    last_status_code: int | None
    created_at: datetime
    completed_at: datetime | None


class OpsDeliveryList(BaseModel):
    data: list[OpsDeliveryRecord]
    has_more: bool
    next_cursor: str | None


class TriggerWebhookRequest(BaseModel):
    model_config = _strict

    event: str = Field(min_length=1, max_length=64, examples=["session.completed"])
    target_url: str = Field(min_length=1, max_length=2048, examples=["https://partner.example/h"])

    @field_validator("event")
    @classmethod
    def _catalogue_type(cls, value: str) -> str:
        return _known_type(value)


class TriggerWebhookResponse(BaseModel):
    event_id: str
    delivery_id: str
    type: EventType
    target_url: str
