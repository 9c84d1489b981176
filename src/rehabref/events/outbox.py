"""Writing events into the outbox inside the caller's business transaction.

An event row and one pending delivery row per subscribed target are written with the state
change they describe, so a crash after commit loses nothing: the worker finds them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import msgspec
from sqlalchemy import (
    ColumnElement,
    Integer,
    String,
    bindparam,
    case,
    cast,
    func,
    insert,
    literal_column,
    or_,
    select,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref import ids
from rehabref.clock import iso, utcnow
from rehabref.db import table
from rehabref.events.catalogue import EVENT_TYPES, within_boundary
from rehabref.fastsql import (
    Connection,
    Statement,
    batching,
    execute,
    execute_many,
    fetch_all,
    fetch_one,
)
from rehabref.ids import new_id
from rehabref.tables.events import Delivery, Event, WebhookEndpoint
from rehabref.tables.partners import Partner

_events = table(Event)
_deliveries = table(Delivery)
_endpoints = table(WebhookEndpoint)
_partners = table(Partner)
_CONTRACT = Statement(select(_partners.c.contract).where(_partners.c.id == bindparam("partner_id")))
_ACTIVE_ENDPOINTS = Statement(
    select(_endpoints.c.id, _endpoints.c.url, _endpoints.c.enabled_events).where(
        _endpoints.c.partner_id == bindparam("partner_id"),
        _endpoints.c.environment == bindparam("environment"),
        _endpoints.c.active.is_(True),
    )
)
_INSERT_EVENTS = Statement(insert(_events))
_INSERT_DELIVERIES = Statement(insert(_deliveries))


def _fan_out_statement() -> Statement:
    """PostgreSQL: one pending delivery per subscribed endpoint of an event, chosen and
    numbered in SQL, so a batched create needs no round trip to read the endpoints first.

    Delivery ids are ``stem + two characters`` of an ``ids.new_id_block`` stem. Constants
    are written into the SQL text, not sent as parameters with every create.
    """

    def constant(value: int) -> ColumnElement[int]:
        return literal_column(str(value), Integer)

    enabled = cast(_endpoints.c.enabled_events, JSONB)
    every_event = or_(
        _endpoints.c.enabled_events.is_(None),
        case(
            (
                func.jsonb_typeof(enabled) == literal_column("'array'", String),
                func.jsonb_array_length(enabled),
            ),
            else_=constant(0),
        )
        == constant(0),
    )
    subscribed = (
        select(
            _endpoints.c.id,
            _endpoints.c.url,
            (cast(func.row_number().over(order_by=_endpoints.c.id), Integer) - constant(1)).label(
                "n"
            ),
        )
        .where(
            _endpoints.c.partner_id == bindparam("partner_id"),
            _endpoints.c.environment == bindparam("environment"),
            _endpoints.c.active.is_(True),
            or_(every_event, enabled.has_key(bindparam("event_type", type_=String))),
        )
        .subquery()
    )

    alphabet = literal_column(f"'{ids.ALPHABET}'", String)

    def id_char(position: ColumnElement[int]) -> ColumnElement[str]:
        return func.substr(alphabet, position + constant(1), constant(1))

    when = bindparam("when", type_=_deliveries.c.created_at.type)
    rows = select(
        bindparam("id_stem", type_=String)
        + id_char(subscribed.c.n // constant(32))
        + id_char(subscribed.c.n % constant(32)),
        bindparam("event_id", type_=String),
        subscribed.c.id,
        subscribed.c.url,
        literal_column("'pending'", String),
        constant(0),
        when,
        when,
    ).select_from(subscribed)
    columns = [
        "id",
        "event_id",
        "endpoint_id",
        "target_url",
        "state",
        "attempt_count",
        "next_attempt_at",
        "created_at",
    ]
    return Statement(insert(_deliveries).from_select(columns, rows))


_FAN_OUT = _fan_out_statement()


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


def envelope(*, event_id: str, event_type: str, occurred_at: datetime, data: dict[str, Any]) -> str:
    return msgspec.json.encode(
        {"event_id": event_id, "type": event_type, "occurred_at": iso(occurred_at), "data": data}
    ).decode()


async def record_events(
    conn: Connection,
    *,
    partner_id: str,
    environment: str,
    events: list[NewEvent],
    contract: str | None = None,
) -> list[str]:
    """Store events and their pending deliveries in four statements. Never commits.

    ``data`` is cut to the partner's data boundary here (no clinical keys for ``v1``), so no
    emitter can leak clinical content by mistake. Callers that know the partner's contract
    pass it and save a query.
    """
    for item in events:
        if item.event_type not in EVENT_TYPES:
            raise ValueError(f"unknown event type {item.event_type}")
    if contract is None:
        found = await fetch_one(conn, _CONTRACT, {"partner_id": partner_id})
        contract = found.contract if found is not None else "v1"
    # Batched on PostgreSQL: the endpoints are chosen inside the batch's one statement.
    in_sql = batching(conn)
    endpoints = (
        []
        if in_sql
        else [
            (row.id, row.url, row.enabled_events)
            for row in await fetch_all(
                conn, _ACTIVE_ENDPOINTS, {"partner_id": partner_id, "environment": environment}
            )
        ]
    )
    fan_outs: list[dict[str, Any]] = []
    event_rows: list[dict[str, Any]] = []
    delivery_rows: list[dict[str, Any]] = []
    now = utcnow()
    for item in events:
        when = item.occurred_at or now
        event_id = new_id("evt")
        data = within_boundary(item.data, contract=contract)
        event_rows.append(
            {
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
        )
        targets: list[tuple[str | None, str]] = [
            (endpoint_id, url)
            for endpoint_id, url, enabled in endpoints
            if not item.only_extra_targets and (not enabled or item.event_type in enabled)
        ]
        targets.extend((None, url) for url in item.extra_targets)
        if in_sql and not item.only_extra_targets:
            fan_outs.append(
                {
                    "partner_id": partner_id,
                    "environment": environment,
                    "event_type": item.event_type,
                    "id_stem": ids.new_id_block("dlv"),
                    "event_id": event_id,
                    "when": when,
                }
            )
        delivery_rows.extend(
            delivery_row(event_id, endpoint_id, url, when) for endpoint_id, url in targets
        )
    await execute_many(conn, _INSERT_EVENTS, event_rows)
    await execute_many(conn, _INSERT_DELIVERIES, delivery_rows)
    for fan_out in fan_outs:
        await execute(conn, _FAN_OUT, fan_out)
    return [row["id"] for row in event_rows]


async def record_event(
    conn: AsyncConnection, *, partner_id: str, environment: str, event: NewEvent
) -> str:
    (event_id,) = await record_events(
        conn, partner_id=partner_id, environment=environment, events=[event]
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
