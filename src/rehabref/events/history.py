"""Events and their deliveries as partners and coordinators see them; redelivery.

Partner calls pass their ``PartnerScope`` and see only their own events; coordinators pass an
``OperatorScope`` and see every partner's (or those its filters name). Deliveries and
attempts are read only for events a scoped read returned. Never commits.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import Row, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref import cursors
from rehabref.clock import iso, utcnow
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.events.outbox import delivery_row
from rehabref.events.responses import (
    AttemptRecord,
    DeliveryRecord,
    EventDetail,
    EventRecord,
    NewDelivery,
    OpsEventDetail,
    OpsEventRecord,
)
from rehabref.events.sealing import event_data, opened_excerpt
from rehabref.scope import OperatorScope, PartnerScope, Scope
from rehabref.tables.events import Delivery, DeliveryAttempt, Event, WebhookEndpoint

_events = table(Event)
_deliveries = table(Delivery)
_attempts = table(DeliveryAttempt)
_endpoints = table(WebhookEndpoint)
_ID = re.compile(r"^(evt|dlv)_[0-9a-z]{26}$")


class EventRow(Protocol):
    """An ``events`` row (``tables.events.Event``), read-only."""

    @property
    def id(self) -> str: ...

    @property
    def partner_id(self) -> str: ...

    @property
    def environment(self) -> str: ...

    @property
    def type(self) -> str: ...

    @property
    def referral_id(self) -> str | None: ...

    @property
    def data(self) -> str: ...  # sealed JSON text (``events.sealing``)

    @property
    def body(self) -> str: ...

    @property
    def occurred_at(self) -> datetime: ...


def encode_cursor(last_id: str) -> str:
    return cursors.encode_cursor(last_id)


def decode_cursor(cursor: str) -> str | None:
    return cursors.decode_cursor(cursor, _ID)


def _event_fields(ring: KeyRing, row: EventRow) -> dict[str, Any]:
    """The fields every view of an event starts with: its ``data`` opened."""
    return {
        "event_id": row.id,
        "type": row.type,
        "occurred_at": iso(row.occurred_at),
        "referral_id": row.referral_id,
        "data": event_data(ring, row.data),
    }


def _owner_fields(row: EventRow) -> dict[str, Any]:
    return {"partner_id": row.partner_id, "environment": row.environment}


def event_record(ring: KeyRing, row: EventRow) -> EventRecord:
    """The event as partners see it."""
    return EventRecord(**_event_fields(ring, row))


def event_detail(ring: KeyRing, row: EventRow, deliveries: list[DeliveryRecord]) -> EventDetail:
    return EventDetail(**_event_fields(ring, row), deliveries=deliveries)


def ops_event_record(ring: KeyRing, row: EventRow) -> OpsEventRecord:
    """The event as coordinators see it: with its partner and environment."""
    return OpsEventRecord(**_event_fields(ring, row), **_owner_fields(row))


def ops_event_detail(
    ring: KeyRing, row: EventRow, deliveries: list[DeliveryRecord]
) -> OpsEventDetail:
    return OpsEventDetail(**_event_fields(ring, row), **_owner_fields(row), deliveries=deliveries)


def _delivery_fields(row: Row[Any]) -> dict[str, Any]:
    return {
        "delivery_id": row.id,
        "endpoint_id": row.endpoint_id,
        "target_url": row.target_url,
        "state": row.state,
        "attempt_count": row.attempt_count,
        "next_attempt_at": iso(row.next_attempt_at) if row.state == "pending" else None,
        "last_status_code": row.last_status_code,
        "created_at": iso(row.created_at),
        "completed_at": iso(row.completed_at),
    }


async def list_events(
    conn: AsyncConnection,
    *,
    scope: Scope,
    event_type: str | None,
    referral_id: str | None,
    before_id: str | None,
    limit: int,
) -> tuple[Sequence[EventRow], bool]:
    query = scope.select(_events)
    if event_type is not None:
        query = query.where(_events.c.type == event_type)
    if referral_id is not None:
        query = query.where(_events.c.referral_id == referral_id)
    if before_id is not None:
        query = query.where(_events.c.id < before_id)
    rows = (await conn.execute(query.order_by(_events.c.id.desc()).limit(limit + 1))).all()
    return list(rows[:limit]), len(rows) > limit


async def get_event(conn: AsyncConnection, *, scope: Scope, event_id: str) -> EventRow | None:
    row: EventRow | None = (
        await conn.execute(scope.select(_events).where(_events.c.id == event_id))
    ).first()
    return row


async def deliveries_of(
    conn: AsyncConnection, ring: KeyRing, *, events: Sequence[EventRow]
) -> dict[str, list[DeliveryRecord]]:
    """Each event's deliveries with their attempts (the receiver's answers opened with
    ``ring``), by event id: two queries in all."""
    by_event: dict[str, list[DeliveryRecord]] = {event.id: [] for event in events}
    if not by_event:
        return by_event
    rows = (
        await conn.execute(
            select(_deliveries)
            .where(_deliveries.c.event_id.in_(list(by_event)))
            .order_by(_deliveries.c.id)
        )
    ).all()
    if not rows:
        return by_event
    attempts = await conn.execute(
        select(_attempts)
        .where(_attempts.c.delivery_id.in_([row.id for row in rows]))
        .order_by(_attempts.c.attempted_at, _attempts.c.id)
    )
    by_delivery: dict[str, list[AttemptRecord]] = {row.id: [] for row in rows}
    for attempt in attempts:
        by_delivery[attempt.delivery_id].append(
            AttemptRecord(
                attempted_at=iso(attempt.attempted_at),
                status_code=attempt.status_code,
                latency_ms=attempt.latency_ms,
                error=attempt.error,
                response_excerpt=opened_excerpt(ring, attempt.response_excerpt),
                note=attempt.note,
            )
        )
    for row in rows:
        by_event[row.event_id].append(
            DeliveryRecord(**_delivery_fields(row), attempts=by_delivery[row.id])
        )
    return by_event


async def redeliver(conn: AsyncConnection, *, event: EventRow) -> list[NewDelivery]:
    """A new pending delivery per target: the endpoints subscribed now, plus the extra
    targets (callback_url, sandbox target_url) the event was delivered to before."""
    endpoints = (
        await conn.execute(
            PartnerScope.owning(event)
            .select(_endpoints, _endpoints.c.id, _endpoints.c.url, _endpoints.c.enabled_events)
            .where(_endpoints.c.active.is_(True), _endpoints.c.disabled_at.is_(None))
        )
    ).all()
    targets: dict[str, str | None] = {
        url: endpoint_id
        for endpoint_id, url, enabled in endpoints
        if not enabled or event.type in enabled
    }
    earlier = await conn.execute(
        select(_deliveries.c.target_url)
        .where(_deliveries.c.event_id == event.id, _deliveries.c.endpoint_id.is_(None))
        .distinct()
    )
    for (url,) in earlier:
        targets.setdefault(url, None)
    now = utcnow()
    rows = [delivery_row(event.id, endpoint_id, url, now) for url, endpoint_id in targets.items()]
    if rows:
        await conn.execute(insert(_deliveries), rows)
    return [NewDelivery(delivery_id=row["id"], target_url=row["target_url"]) for row in rows]


async def list_deliveries(
    conn: AsyncConnection,
    *,
    scope: OperatorScope,
    state: str | None,
    before_id: str | None,
    limit: int,
) -> tuple[list[dict[str, Any]], bool]:
    """Deliveries across partners, for coordinators (newest first)."""
    d, e = _deliveries, _events
    query = (
        select(d, e.c.type.label("event_type"), e.c.partner_id, e.c.environment)
        .join(e, e.c.id == d.c.event_id)
        .where(*scope.where(e))
    )
    if state is not None:
        query = query.where(d.c.state == state)
    if before_id is not None:
        query = query.where(d.c.id < before_id)
    rows = (await conn.execute(query.order_by(d.c.id.desc()).limit(limit + 1))).all()
    items = [
        {
            **_delivery_fields(row),
            "event_id": row.event_id,
            "event_type": row.event_type,
            "partner_id": row.partner_id,
            "environment": row.environment,
        }
        for row in rows[:limit]
    ]
    return items, len(rows) > limit
