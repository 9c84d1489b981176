"""Webhook endpoints a partner registers, per environment. Never commits.

Every function takes the caller's ``PartnerScope``: a partner sees and changes only its own
endpoints in the environment of the key it uses. An endpoint's representation shows whether
it is enabled and its health (``endpoint_health.py``); deleting it cancels what it is still
owed, and re-enabling one the worker disabled starts it afresh.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal, Protocol, cast

import msgspec
from sqlalchemy import Select, insert, or_
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.clock import as_utc, iso, utcnow
from rehabref.db import table
from rehabref.events.catalogue import EventType
from rehabref.events.endpoint_health import Health, circuit
from rehabref.events.endpoint_state import cancel_pending, health_columns, health_of
from rehabref.events.responses import EndpointHealth, Environment, WebhookEndpointRecord
from rehabref.ids import new_id
from rehabref.scope import OperatorScope, PartnerScope
from rehabref.tables.events import WebhookEndpoint

_endpoints = table(WebhookEndpoint)
MAX_ENDPOINTS = 20  # active endpoints per partner and environment


class EndpointRow(Protocol):
    """A ``webhook_endpoints`` row (``tables.events.WebhookEndpoint``), read-only."""

    @property
    def id(self) -> str: ...

    @property
    def partner_id(self) -> str: ...

    @property
    def environment(self) -> str: ...

    @property
    def url(self) -> str: ...

    @property
    def enabled_events(self) -> list[str] | None: ...

    @property
    def active(self) -> bool: ...

    @property
    def created_at(self) -> datetime: ...

    @property
    def deleted_at(self) -> datetime | None: ...

    @property
    def consecutive_failures(self) -> int: ...

    @property
    def failing_since(self) -> datetime | None: ...

    @property
    def circuit_open_until(self) -> datetime | None: ...

    @property
    def disabled_at(self) -> datetime | None: ...

    @property
    def disabled_reason(self) -> str | None: ...


def _iso(value: datetime | None) -> str | None:
    return None if value is None else iso(as_utc(value))


def endpoint_record(row: EndpointRow, *, now: datetime | None = None) -> WebhookEndpointRecord:
    health = health_of(row)
    state = circuit(health, now=now or utcnow())
    return WebhookEndpointRecord(
        endpoint_id=row.id,
        url=row.url,
        environment=cast(Environment, row.environment),
        enabled_events=cast("list[EventType] | None", row.enabled_events),
        active=bool(row.active),
        status="disabled" if row.disabled_at is not None else "enabled",
        disabled_reason=cast("Literal['failing'] | None", row.disabled_reason),
        disabled_at=_iso(row.disabled_at),
        health=EndpointHealth(
            circuit=state,
            consecutive_failures=health.consecutive_failures,
            failing_since=_iso(health.failing_since),
            circuit_open_until=_iso(health.circuit_open_until) if state == "open" else None,
        ),
        created_at=iso(row.created_at),
    )


def _active(scope: PartnerScope) -> Select[Any]:
    return scope.select(_endpoints).where(_endpoints.c.active.is_(True))


async def count_active(conn: AsyncConnection, *, scope: PartnerScope) -> int:
    return len((await conn.execute(_active(scope))).all())


async def create_endpoint(
    conn: AsyncConnection,
    *,
    scope: PartnerScope,
    url: str,
    enabled_events: list[str] | None,
) -> WebhookEndpointRecord:
    row = {
        "id": new_id("whe"),
        **scope.columns(),
        "url": url,
        "enabled_events": enabled_events,
        "active": True,
        "created_at": utcnow(),
        "deleted_at": None,
    }
    await conn.execute(insert(_endpoints), row)
    created = (await conn.execute(_active(scope).where(_endpoints.c.id == row["id"]))).one()
    return endpoint_record(created)


async def list_endpoints(
    conn: AsyncConnection, *, scope: PartnerScope
) -> list[WebhookEndpointRecord]:
    rows = await conn.execute(_active(scope).order_by(_endpoints.c.id.desc()))
    return [endpoint_record(row) for row in rows]


async def get_endpoint(
    conn: AsyncConnection, *, scope: PartnerScope, endpoint_id: str, now: datetime | None = None
) -> WebhookEndpointRecord | None:
    row = (await conn.execute(_active(scope).where(_endpoints.c.id == endpoint_id))).first()
    return None if row is None else endpoint_record(row, now=now)


async def delete_endpoint(conn: AsyncConnection, *, scope: PartnerScope, endpoint_id: str) -> bool:
    """Deactivate: no new deliveries, and the pending ones are cancelled (kept in the log)."""
    now = utcnow()
    result = await conn.execute(
        scope.update(_endpoints)
        .where(_endpoints.c.id == endpoint_id, _endpoints.c.active.is_(True))
        .values(active=False, deleted_at=now)
    )
    if result.rowcount != 1:
        return False
    await cancel_pending(conn, endpoint_ids=[endpoint_id], now=now)
    return True


async def enable_endpoint(
    conn: AsyncConnection, *, scope: PartnerScope, endpoint_id: str
) -> WebhookEndpointRecord | None:
    """Enable an endpoint again, healthy (closed circuit, no failures counted); None when
    the partner has no such endpoint. Enabling an enabled endpoint changes nothing."""
    row = (await conn.execute(_active(scope).where(_endpoints.c.id == endpoint_id))).first()
    if row is None:
        return None
    if row.disabled_at is not None or row.consecutive_failures:
        await conn.execute(
            scope.update(_endpoints)
            .where(_endpoints.c.id == endpoint_id)
            .values(health_columns(Health()))
        )
        row = (await conn.execute(_active(scope).where(_endpoints.c.id == endpoint_id))).one()
    return endpoint_record(row)


async def needing_attention(
    conn: AsyncConnection, *, scope: OperatorScope, limit: int = 100
) -> list[dict[str, Any]]:
    """Registered endpoints, across partners, that are disabled or failing (coordinators'
    view), disabled ones first."""
    w = _endpoints
    rows = await conn.execute(
        scope.select(w)
        .where(
            w.c.active.is_(True), or_(w.c.disabled_at.is_not(None), w.c.consecutive_failures > 0)
        )
        .order_by(w.c.disabled_at.is_(None), w.c.id.desc())
        .limit(limit)
    )
    return [
        {**msgspec.structs.asdict(endpoint_record(row)), "partner_id": row.partner_id}
        for row in rows
    ]
