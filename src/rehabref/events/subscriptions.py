"""Webhook endpoints a partner registers, per environment. Never commits."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Row, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.clock import iso, utcnow
from rehabref.db import table
from rehabref.ids import new_id
from rehabref.tables.events import WebhookEndpoint

_endpoints = table(WebhookEndpoint)
MAX_ENDPOINTS = 20  # active endpoints per partner and environment


def endpoint_record(row: Row[Any]) -> dict[str, Any]:
    return {
        "endpoint_id": row.id,
        "url": row.url,
        "environment": row.environment,
        "enabled_events": row.enabled_events,
        "active": bool(row.active),
        "created_at": iso(row.created_at),
    }


def _scoped(partner_id: str, environment: str) -> Any:
    return select(_endpoints).where(
        _endpoints.c.partner_id == partner_id,
        _endpoints.c.environment == environment,
        _endpoints.c.active.is_(True),
    )


async def count_active(conn: AsyncConnection, *, partner_id: str, environment: str) -> int:
    return len((await conn.execute(_scoped(partner_id, environment))).all())


async def create_endpoint(
    conn: AsyncConnection,
    *,
    partner_id: str,
    environment: str,
    url: str,
    enabled_events: list[str] | None,
) -> dict[str, Any]:
    row = {
        "id": new_id("whe"),
        "partner_id": partner_id,
        "environment": environment,
        "url": url,
        "enabled_events": enabled_events,
        "active": True,
        "created_at": utcnow(),
        "deleted_at": None,
    }
    await conn.execute(insert(_endpoints), row)
    created = (await conn.execute(select(_endpoints).where(_endpoints.c.id == row["id"]))).one()
    return endpoint_record(created)


async def list_endpoints(
    conn: AsyncConnection, *, partner_id: str, environment: str
) -> list[dict[str, Any]]:
    rows = await conn.execute(_scoped(partner_id, environment).order_by(_endpoints.c.id.desc()))
    return [endpoint_record(row) for row in rows]


async def get_endpoint(
    conn: AsyncConnection, *, partner_id: str, environment: str, endpoint_id: str
) -> dict[str, Any] | None:
    row = (
        await conn.execute(_scoped(partner_id, environment).where(_endpoints.c.id == endpoint_id))
    ).first()
    return None if row is None else endpoint_record(row)


async def delete_endpoint(
    conn: AsyncConnection, *, partner_id: str, environment: str, endpoint_id: str
) -> bool:
    """Deactivate: no new deliveries; pending ones to it still finish (they were owed)."""
    result = await conn.execute(
        update(_endpoints)
        .where(
            _endpoints.c.id == endpoint_id,
            _endpoints.c.partner_id == partner_id,
            _endpoints.c.environment == environment,
            _endpoints.c.active.is_(True),
        )
        .values(active=False, deleted_at=utcnow())
    )
    return bool(result.rowcount == 1)
