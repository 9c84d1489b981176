"""Event outbox: events, their per-target deliveries, and every delivery attempt."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, DateTime, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from rehabref.db import Base


class WebhookEndpoint(Base):
    __tablename__ = "webhook_endpoints"
    __table_args__ = (Index("ix_webhook_endpoints_partner_env", "partner_id", "environment"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    partner_id: Mapped[str] = mapped_column(ForeignKey("partners.id"))
    environment: Mapped[str] = mapped_column(String(8))
    url: Mapped[str] = mapped_column(String(2048))
    enabled_events: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    deleted_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # Health (events/endpoint_health.py): failures in a row, since when, circuit open until.
    consecutive_failures: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    failing_since: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    circuit_open_until: Mapped[datetime | None] = mapped_column(
        DateTime(timezone=True), nullable=True
    )
    # Disabled: no deliveries until the partner re-enables it (reason: failing).
    disabled_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    disabled_reason: Mapped[str | None] = mapped_column(String(32), nullable=True)


class Event(Base):
    __tablename__ = "events"
    __table_args__ = (
        Index("ix_events_partner_env", "partner_id", "environment", "id"),
        Index("ix_events_referral", "referral_id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    # No foreign key (migration 0010): its row lock on the partner cost every create.
    partner_id: Mapped[str] = mapped_column(String(40))
    environment: Mapped[str] = mapped_column(String(8))
    type: Mapped[str] = mapped_column(String(48))
    referral_id: Mapped[str | None] = mapped_column(String(40), nullable=True)
    # Both sealed (events/sealing.py, since migration 0031): data as sealed JSON text, body
    # the exact envelope sent on every attempt, serialised once.
    data: Mapped[str] = mapped_column(Text)
    body: Mapped[str] = mapped_column(Text)
    occurred_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Delivery(Base):
    __tablename__ = "deliveries"
    __table_args__ = (
        Index("ix_deliveries_due", "state", "next_attempt_at"),
        Index("ix_deliveries_event", "event_id"),
        Index("ix_deliveries_endpoint_state", "endpoint_id", "state"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    event_id: Mapped[str] = mapped_column(ForeignKey("events.id"))
    endpoint_id: Mapped[str | None] = mapped_column(String(40), nullable=True)
    target_url: Mapped[str] = mapped_column(String(2048))
    state: Mapped[str] = mapped_column(String(16))  # pending | succeeded | failed | cancelled
    attempt_count: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    claimed_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # The worker holding the lease; results are written only by the claim's holder.
    claimed_by: Mapped[str | None] = mapped_column(String(40), nullable=True)
    last_status_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    completed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class DeliveryAttempt(Base):
    __tablename__ = "delivery_attempts"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    delivery_id: Mapped[str] = mapped_column(ForeignKey("deliveries.id"), index=True)
    attempted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    status_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    latency_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    error: Mapped[str | None] = mapped_column(String(500), nullable=True)
    response_excerpt: Mapped[str | None] = mapped_column(Text, nullable=True)  # sealed
    # What the attempt was when it was not an ordinary send (set by the delivery transport,
    # e.g. the sandbox's phone-5 copies); None otherwise.
    note: Mapped[str | None] = mapped_column(String(200), nullable=True)
