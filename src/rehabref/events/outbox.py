"""Writing events into the outbox inside the caller's business transaction.

An event row and one pending delivery row per subscribed target are written with the state
change they describe, so a crash after commit loses nothing: the worker finds them.

``outbox_rows`` and ``fan_out`` are pure: a referral create plans its rows with them
(``workflows/create_plan.py``) and ``record_events`` writes them for every other emitter, so
which endpoints hear of an event is decided in one place.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

import msgspec
from sqlalchemy import bindparam, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.clock import iso, utcnow
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.events.catalogue import EVENT_TYPES, within_boundary
from rehabref.events.sealing import sealed_event_row
from rehabref.fastsql import Connection, Statement, execute_many, fetch_all, fetch_one
from rehabref.ids import new_id
from rehabref.tables.events import Delivery, Event, WebhookEndpoint
from rehabref.tables.partners import Partner

_events = table(Event)
_deliveries = table(Delivery)
_endpoints = table(WebhookEndpoint)
_partners = table(Partner)
_CONTRACT = Statement(select(_partners.c.contract).where(_partners.c.id == bindparam("partner_id")))
_ACTIVE_ENDPOINTS = Statement(
    select(_endpoints.c.id, _endpoints.c.url, _endpoints.c.enabled_events)
    .where(
        _endpoints.c.partner_id == bindparam("partner_id"),
        _endpoints.c.environment == bindparam("environment"),
        _endpoints.c.active.is_(True),
        _endpoints.c.disabled_at.is_(None),
    )
    .order_by(_endpoints.c.id)
)
_INSERT_EVENTS = Statement(insert(_events))
_INSERT_DELIVERIES = Statement(insert(_deliveries))


@dataclass(frozen=True)
class NewEvent:
    event_type: str
    data: dict[str, Any]
    referral_id: str | None = None
    # Targets beyond the partner's registered endpoints (a Shape G callback_url).
    extra_targets: tuple[str, ...] = ()
    occurred_at: datetime | None = field(default=None)
    # Deliver to ``extra_targets`` only, not to registered endpoints (sandbox trigger).
    only_extra_targets: bool = False


class Endpoint(NamedTuple):
    """An active, enabled webhook endpoint. Its url and events never change (an endpoint is
    only ever registered, disabled or deactivated), so its id stands for all of it."""

    id: str
    url: str
    enabled_events: list[str] | None


@dataclass(frozen=True)
class OutboxEvent:
    """An event row to write, with what ``fan_out`` needs to pick its targets."""

    row: dict[str, Any]
    event: NewEvent


def envelope(*, event_id: str, event_type: str, occurred_at: datetime, data: dict[str, Any]) -> str:
    return msgspec.json.encode(
        {"event_id": event_id, "type": event_type, "occurred_at": iso(occurred_at), "data": data}
    ).decode()


def outbox_rows(
    *, partner_id: str, environment: str, contract: str, events: Iterable[NewEvent], now: datetime
) -> list[OutboxEvent]:
    """The event rows, ``data`` cut to the partner's data boundary (no clinical keys for
    ``v1``) so no emitter can leak clinical content by mistake; the envelope is encoded once,
    here, and sent as it is on every attempt."""
    planned: list[OutboxEvent] = []
    for item in events:
        if item.event_type not in EVENT_TYPES:
            raise ValueError(f"unknown event type {item.event_type}")
        when = item.occurred_at or now
        event_id = new_id("evt")
        data = within_boundary(item.data, contract=contract)
        row = {
            "id": event_id,
            "partner_id": partner_id,
            "environment": environment,
            "type": item.event_type,
            "referral_id": item.referral_id,
            "data": data,
            "body": envelope(
                event_id=event_id, event_type=item.event_type, occurred_at=when, data=data
            ),
            "occurred_at": when,
        }
        planned.append(OutboxEvent(row, item))
    return planned


def fan_out(events: Sequence[OutboxEvent], endpoints: Sequence[Endpoint]) -> list[dict[str, Any]]:
    """One pending delivery per event and target: each active endpoint subscribed to the
    event's type (no list, or an empty one, means every type), then its extra targets. Ids
    are made in order, so an event's deliveries sort after it and before the next event's."""
    rows: list[dict[str, Any]] = []
    for planned in events:
        item = planned.event
        event_id = planned.row["id"]
        when = planned.row["occurred_at"]
        if not item.only_extra_targets:
            rows.extend(
                delivery_row(event_id, endpoint.id, endpoint.url, when)
                for endpoint in endpoints
                if not endpoint.enabled_events or item.event_type in endpoint.enabled_events
            )
        rows.extend(delivery_row(event_id, None, url, when) for url in item.extra_targets)
    return rows


async def active_endpoints(
    conn: Connection, *, partner_id: str, environment: str
) -> list[Endpoint]:
    rows = await fetch_all(
        conn, _ACTIVE_ENDPOINTS, {"partner_id": partner_id, "environment": environment}
    )
    return [Endpoint(row.id, row.url, row.enabled_events) for row in rows]


async def record_events(
    conn: Connection,
    ring: KeyRing,
    *,
    partner_id: str,
    environment: str,
    events: list[NewEvent],
    contract: str | None = None,
) -> list[str]:
    """Store events (sealed under ``ring``) and their pending deliveries. Never commits.

    Callers that know the partner's contract pass it and save a query.
    """
    if contract is None:
        found = await fetch_one(conn, _CONTRACT, {"partner_id": partner_id})
        contract = found.contract if found is not None else "v1"
    planned = outbox_rows(
        partner_id=partner_id,
        environment=environment,
        contract=contract,
        events=events,
        now=utcnow(),
    )
    endpoints = await active_endpoints(conn, partner_id=partner_id, environment=environment)
    await execute_many(conn, _INSERT_EVENTS, [sealed_event_row(ring, item.row) for item in planned])
    await execute_many(conn, _INSERT_DELIVERIES, fan_out(planned, endpoints))
    return [item.row["id"] for item in planned]


async def record_event(
    conn: AsyncConnection, ring: KeyRing, *, partner_id: str, environment: str, event: NewEvent
) -> str:
    (event_id,) = await record_events(
        conn, ring, partner_id=partner_id, environment=environment, events=[event]
    )
    return event_id


def delivery_row(
    event_id: str, endpoint_id: str | None, url: str, when: datetime
) -> dict[str, Any]:
    return {
        "id": new_id("dlv"),
        "event_id": event_id,
        "endpoint_id": endpoint_id,
        "target_url": url,
        "state": "pending",
        "attempt_count": 0,
        "next_attempt_at": when,
        "claimed_until": None,
        "claimed_by": None,
        "last_status_code": None,
        "created_at": when,
        "completed_at": None,
    }
