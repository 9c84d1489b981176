"""Read queries behind the console pages: across partners by design (an ``OperatorScope``, or
a referral the coordinator opened by id). Never commits."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from sqlalchemy import Row, func, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.events import history
from rehabref.events.responses import OpsEventDetail
from rehabref.referrals.rows import ContactTaskRow
from rehabref.referrals.sealing import opened_row
from rehabref.referrals.status import STATUSES
from rehabref.referrals.store import person_conditions
from rehabref.scope import OperatorScope
from rehabref.tables.intake import ContactTask
from rehabref.tables.partners import Partner
from rehabref.tables.referrals import Referral

_referrals = table(Referral)
_partners = table(Partner)
_tasks = table(ContactTask)
BOARD_LIMIT = 50


async def status_counts(conn: AsyncConnection, *, scope: OperatorScope) -> dict[str, int]:
    query = scope.select(_referrals, _referrals.c.status, func.count()).group_by(
        _referrals.c.status
    )
    found = {status: int(n) for status, n in (await conn.execute(query)).all()}
    return {status: found.get(status, 0) for status in STATUSES}


async def board(
    conn: AsyncConnection,
    *,
    scope: OperatorScope,
    status: str | None,
    search: str | None,
    before_id: str | None,
    ring: KeyRing,
) -> tuple[list[SimpleNamespace], bool]:
    """Newest first, first names opened. ``search`` matches an identifier, a phone or an
    e-mail address exactly (these two through their blind indexes, ``ring``: they are
    sealed) or a city by prefix (case-insensitive). Names are sealed and not searchable
    (docs/decisions.md 23)."""
    query = scope.select(
        _referrals,
        _referrals.c.id,
        _referrals.c.status,
        _referrals.c.environment,
        _referrals.c.external_ref,
        _referrals.c.partner_reference,
        _referrals.c.patient_first_name,
        _referrals.c.patient_city,
        _referrals.c.care_mode,
        _referrals.c.campaign,
        _referrals.c.created_at,
        _partners.c.name.label("partner_name"),
    ).join(_partners, _partners.c.id == _referrals.c.partner_id)
    if status:
        query = query.where(_referrals.c.status == status)
    if search:
        term = search.strip()[:200]
        prefix = term.lower().replace("%", "").replace("_", "") + "%"
        query = query.where(
            or_(
                _referrals.c.id == term,
                _referrals.c.external_ref == term,
                _referrals.c.partner_reference == term,
                _referrals.c.tracking_code == term,
                *person_conditions(ring, phone=term, email=term),
                func.lower(_referrals.c.patient_city).like(prefix),
            )
        )
    if before_id:
        query = query.where(_referrals.c.id < before_id)
    rows: list[Any] = list(
        (await conn.execute(query.order_by(_referrals.c.id.desc()).limit(BOARD_LIMIT + 1))).all()
    )
    shown = [opened_row(ring, row._mapping) for row in rows[:BOARD_LIMIT]]
    return shown, len(rows) > BOARD_LIMIT


async def referral(conn: AsyncConnection, referral_id: str) -> Row[Any] | None:
    query = (
        select(_referrals, _partners.c.name.label("partner_name"))
        .join(_partners, _partners.c.id == _referrals.c.partner_id)
        .where(_referrals.c.id == referral_id)
    )
    return (await conn.execute(query)).first()


async def events_with_deliveries(
    conn: AsyncConnection, ring: KeyRing, referral_id: str
) -> list[OpsEventDetail]:
    rows, _ = await history.list_events(
        conn,
        scope=OperatorScope(),
        event_type=None,
        referral_id=referral_id,
        before_id=None,
        limit=100,
    )
    deliveries = await history.deliveries_of(conn, ring, events=rows)
    return [history.ops_event_detail(ring, row, deliveries[row.id]) for row in rows]


async def tasks_of(conn: AsyncConnection, referral_id: str) -> list[ContactTaskRow]:
    query = select(_tasks).where(_tasks.c.referral_id == referral_id).order_by(_tasks.c.id)
    return list((await conn.execute(query)).all())


async def partner_names(conn: AsyncConnection, ids: set[str]) -> dict[str, str]:
    if not ids:
        return {}
    rows = await conn.execute(
        select(_partners.c.id, _partners.c.name).where(_partners.c.id.in_(ids))
    )
    return {row.id: row.name for row in rows}
