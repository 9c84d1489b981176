"""Request models of the webhook, event and sandbox trigger endpoints, and the ops delivery
list (the endpoint and event answers: ``responses.py``)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

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
