"""Webhook endpoints a partner registers, per environment. Never commits.

Every function takes the caller's ``PartnerScope``: a partner sees and changes only its own
endpoints in the environment of the key it uses.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import Select, insert
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.clock import iso, utcnow
from rehabref.db import table
from rehabref.ids import new_id
from rehabref.scope import PartnerScope
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


def endpoint_record(row: EndpointRow) -> dict[str, Any]:
    return {
        "endpoint_id": row.id,
        "url": row.url,
        "environment": row.environment,
        "enabled_events": row.enabled_events,
        "active": bool(row.active),
        "created_at": iso(row.created_at),
    }


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
) -> dict[str, Any]:
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


async def list_endpoints(conn: AsyncConnection, *, scope: PartnerScope) -> list[dict[str, Any]]:
    rows = await conn.execute(_active(scope).order_by(_endpoints.c.id.desc()))
    return [endpoint_record(row) for row in rows]


async def get_endpoint(
    conn: AsyncConnection, *, scope: PartnerScope, endpoint_id: str
) -> dict[str, Any] | None:
    row = (await conn.execute(_active(scope).where(_endpoints.c.id == endpoint_id))).first()
    return None if row is None else endpoint_record(row)


async def delete_endpoint(conn: AsyncConnection, *, scope: PartnerScope, endpoint_id: str) -> bool:
    """Deactivate: no new deliveries; pending ones to it still finish (they were owed)."""
    result = await conn.execute(
        scope.update(_endpoints)
        .where(_endpoints.c.id == endpoint_id, _endpoints.c.active.is_(True))
        .values(active=False, deleted_at=utcnow())
    )
    return bool(result.rowcount == 1)
