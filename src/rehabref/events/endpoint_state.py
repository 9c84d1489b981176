"""Stored endpoint health, and what disabling or deleting an endpoint does. Never commits.

Threat: an endpoint that fails for a day keeps costing sends (and keeps a partner's backlog
growing) unless it is stopped; one that is deleted or disabled must not be owed anything
afterwards. So results are folded into the endpoint's row (``endpoint_health.fold``) in the
worker's result transaction, and disabling or deleting an endpoint cancels its pending
deliveries in the same transaction (they stay in the log, state ``cancelled``). A partner
whose endpoint the worker disables is told: by e-mail through the patient-message outbox
when a contact address is on file, and always in the endpoint's representation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.channels.content import Reply
from rehabref.channels.outbox import enqueue
from rehabref.clock import as_utc
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.events.endpoint_health import DISABLE_AFTER, Health, Result, fold
from rehabref.tables.events import Delivery, WebhookEndpoint
from rehabref.tables.partners import Partner

_deliveries = table(Delivery)
_endpoints = table(WebhookEndpoint)
_partners = table(Partner)

DISABLED_PURPOSE = "webhook.endpoint_disabled"


def _utc(value: datetime | None) -> datetime | None:
    return None if value is None else as_utc(value)


def health_of(row: Any) -> Health:
    return Health(
        consecutive_failures=row.consecutive_failures or 0,
        failing_since=_utc(row.failing_since),
        circuit_open_until=_utc(row.circuit_open_until),
        disabled_at=_utc(row.disabled_at),
        disabled_reason=row.disabled_reason,
    )


def health_columns(health: Health) -> dict[str, Any]:
    return {
        "consecutive_failures": health.consecutive_failures,
        "failing_since": health.failing_since,
        "circuit_open_until": health.circuit_open_until,
        "disabled_at": health.disabled_at,
        "disabled_reason": health.disabled_reason,
    }


async def cancel_pending(
    conn: AsyncConnection, *, endpoint_ids: Sequence[str], now: datetime
) -> int:
    """Cancel what these endpoints are still owed. A send in flight finishes and is logged;
    its result leaves the delivery cancelled (``DeliveryWorker`` writes results that way)."""
    if not endpoint_ids:
        return 0
    d = _deliveries
    result = await conn.execute(
        update(d)
        .where(d.c.endpoint_id.in_(endpoint_ids), d.c.state == "pending")
        .values(state="cancelled", completed_at=now)
    )
    return int(result.rowcount or 0)


async def record_results(
    conn: AsyncConnection,
    results: Mapping[str, Iterable[Result]],
    *,
    ring: KeyRing,
    now: datetime,
    lock: bool,
) -> list[str]:
    """Fold each endpoint's new results into its stored health; returns the endpoints this
    disabled (their pending deliveries cancelled, their partner told). ``lock``: take the
    rows' locks first (PostgreSQL, several workers), in id order so workers never deadlock."""
    if not results:
        return []
    w = _endpoints
    query = select(w).where(w.c.id.in_(sorted(results))).order_by(w.c.id)
    rows = (await conn.execute(query.with_for_update() if lock else query)).all()
    changes: list[dict[str, Any]] = []
    disabled: list[Any] = []
    for row in rows:
        before = health_of(row)
        health = fold(before, results[row.id])
        if health == before:
            continue
        changes.append({"b_id": row.id, **health_columns(health)})
        if before.disabled_at is None and health.disabled_at is not None:
            disabled.append(row)
    if changes:
        await conn.execute(
            update(w)
            .where(w.c.id == bindparam("b_id"))
            .values(
                {name: bindparam(name, type_=w.c[name].type) for name in health_columns(Health())}
            ),
            changes,
        )
    await cancel_pending(conn, endpoint_ids=[row.id for row in disabled], now=now)
    for row in disabled:
        await notify_disabled(conn, ring, row, now=now)
    return [row.id for row in disabled]


def disabled_notice(*, url: str, environment: str, endpoint_id: str) -> Reply:
    hours = int(DISABLE_AFTER.total_seconds() // 3600)
    return Reply(
        text=(
            f"Your {environment} webhook endpoint {endpoint_id} ({url}) has failed every "
            f"delivery for {hours} hours and has been disabled. Its pending deliveries were "
            "cancelled and no new ones are queued. Fix the endpoint, then re-enable it with "
            f"POST /api/v1/partners/webhook-endpoints/{endpoint_id}/enable."
        ),
        subject="rehabref: webhook endpoint disabled",
    )


async def notify_disabled(
    conn: AsyncConnection, ring: KeyRing, endpoint: Any, *, now: datetime
) -> str | None:
    """Queue the e-mail to the partner's contact address; None when there is none (then the
    API and the console are what tell them)."""
    found = await conn.execute(
        select(_partners.c.contact_email).where(_partners.c.id == endpoint.partner_id)
    )
    address = found.scalar()
    if not address:
        return None
    return await enqueue(
        conn,
        ring,
        channel="email",
        to=str(address),
        content=disabled_notice(
            url=endpoint.url, environment=endpoint.environment, endpoint_id=endpoint.id
        ),
        purpose=DISABLED_PURPOSE,
        environment=endpoint.environment,
        referral_id=None,
        now=now,
    )
