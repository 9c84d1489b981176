"""The work queues' read queries: what a coordinator has to do next, across partners.

- unmatched: open referrals before booking with no physiotherapist;
- awaiting booking: matched, not booked yet;
- no-show: a booked visit or a scheduled session whose start passed more than
  ``NO_SHOW_GRACE`` ago without being attended or checked in;
- overdue outcome measures: ``care.outcome_due``;
- failed deliveries: webhook deliveries that gave up (``events.history``).

Each list is oldest work first and capped at ``QUEUE_LIMIT``; a coordinator who covers one
city narrows the referral queues to it (failed deliveries belong to partners, not cities).
Never commits.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.care.outcome_due import overdue_since
from rehabref.clock import as_utc
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.events import history
from rehabref.referrals.sealing import opened_row
from rehabref.scope import OperatorScope
from rehabref.tables.care import Assessment, CareSession
from rehabref.tables.intake import ContactTask
from rehabref.tables.matching import Physiotherapist
from rehabref.tables.partners import Partner
from rehabref.tables.referrals import Referral

QUEUES = (
    ("unmatched", "Unmatched"),
    ("awaiting_booking", "Awaiting booking"),
    ("no_show", "No-show"),
    ("outcomes_overdue", "Outcome measures overdue"),
    ("failed_deliveries", "Failed deliveries"),
)
QUEUE_LIMIT = 100
NO_SHOW_GRACE = timedelta(hours=2)
BEFORE_BOOKING = ("received", "contact_pending", "assistant_started")
OPEN = ("received", "contact_pending", "assistant_started", "booked", "attended", "paid")

_referrals = table(Referral)
_partners = table(Partner)
_physios = table(Physiotherapist)
_sessions = table(CareSession)
_assessments = table(Assessment)
_tasks = table(ContactTask)


@dataclass(frozen=True)
class Item:
    """One piece of work: the referral it is about and what is due."""

    referral: Any  # a row of ``_base``'s columns
    what: str
    since: datetime | None

    def opened(self, ring: KeyRing) -> Item:
        """The item with its referral's sealed columns (the first name) opened."""
        return replace(self, referral=opened_row(ring, self.referral._mapping))


def _base(scope: OperatorScope, city: str | None) -> Any:
    r = _referrals
    query = (
        scope.select(
            r,
            r.c.id,
            r.c.status,
            r.c.environment,
            r.c.external_ref,
            r.c.partner_reference,
            r.c.patient_first_name,
            r.c.patient_city,
            r.c.patient_area,
            r.c.appointment_scheduled_at,
            r.c.matched_at,
            r.c.created_at,
            _partners.c.name.label("partner_name"),
            _physios.c.name.label("physio_name"),
        )
        .join(_partners, _partners.c.id == r.c.partner_id)
        .outerjoin(_physios, _physios.c.id == r.c.assigned_physio_id)
    )
    if city:
        query = query.where(func.lower(r.c.patient_city) == city.strip().lower())
    return query


async def unmatched(
    conn: AsyncConnection, scope: OperatorScope, city: str | None = None
) -> list[Item]:
    r = _referrals
    open_task = (
        select(_tasks.c.id)
        .where(
            _tasks.c.referral_id == r.c.id,
            _tasks.c.purpose == "unmatched",
            _tasks.c.status != "done",
        )
        .exists()
    )
    query = (
        _base(scope, city)
        .add_columns(open_task.label("no_fit"))
        .where(r.c.status.in_(BEFORE_BOOKING), r.c.assigned_physio_id.is_(None))
        .order_by(r.c.created_at, r.c.id)
        .limit(QUEUE_LIMIT)
    )
    return [
        Item(
            row,
            "matching found no one: assign by hand" if row.no_fit else "not matched yet",
            row.created_at,
        )
        for row in (await conn.execute(query)).all()
    ]


async def awaiting_booking(
    conn: AsyncConnection, scope: OperatorScope, city: str | None = None
) -> list[Item]:
    r = _referrals
    query = (
        _base(scope, city)
        .where(r.c.status.in_(BEFORE_BOOKING), r.c.assigned_physio_id.is_not(None))
        .order_by(r.c.matched_at, r.c.id)
        .limit(QUEUE_LIMIT)
    )
    return [
        Item(row, f"matched to {row.physio_name}: book a visit", row.matched_at)
        for row in (await conn.execute(query)).all()
    ]


async def no_show(
    conn: AsyncConnection, scope: OperatorScope, now: datetime, city: str | None = None
) -> list[Item]:
    r = _referrals
    cutoff = now - NO_SHOW_GRACE
    visits = (
        _base(scope, city)
        .where(r.c.status == "booked", r.c.appointment_scheduled_at < cutoff)
        .order_by(r.c.appointment_scheduled_at, r.c.id)
        .limit(QUEUE_LIMIT)
    )
    items = [
        Item(row, "booked visit passed without being attended", row.appointment_scheduled_at)
        for row in (await conn.execute(visits)).all()
    ]
    sessions = (
        _base(scope, city)
        .add_columns(_sessions.c.session_number, _sessions.c.scheduled_at.label("session_at"))
        .join(_sessions, _sessions.c.referral_id == r.c.id)
        .where(_sessions.c.status == "scheduled", _sessions.c.scheduled_at < cutoff)
        .order_by(_sessions.c.scheduled_at, _sessions.c.id)
        .limit(QUEUE_LIMIT)
    )
    items += [
        Item(row, f"session {row.session_number} passed without a check-in", row.session_at)
        for row in (await conn.execute(sessions)).all()
    ]
    return sorted(items, key=lambda item: as_utc(item.since or now))[:QUEUE_LIMIT]


async def outcomes_overdue(
    conn: AsyncConnection, scope: OperatorScope, now: datetime, city: str | None = None
) -> list[Item]:
    r = _referrals
    done = (
        select(
            _sessions.c.referral_id,
            func.min(_sessions.c.completed_at).label("first_at"),
            func.max(_sessions.c.completed_at).label("last_at"),
        )
        .where(_sessions.c.status == "completed")
        .group_by(_sessions.c.referral_id)
        .subquery()
    )
    measured = (
        select(_assessments.c.referral_id, func.max(_assessments.c.recorded_at).label("at"))
        .group_by(_assessments.c.referral_id)
        .subquery()
    )
    query = (
        _base(scope, city)
        .add_columns(done.c.first_at, done.c.last_at, measured.c.at.label("measured_at"))
        .join(done, done.c.referral_id == r.c.id)
        .outerjoin(measured, measured.c.referral_id == r.c.id)
        .where(r.c.status.in_(OPEN))
        .order_by(done.c.first_at)
        .limit(QUEUE_LIMIT * 5)
    )
    items = []
    for row in (await conn.execute(query)).all():
        since = overdue_since(
            first_session=row.first_at, last_session=row.last_at, last_measure=row.measured_at
        )
        if since is not None and since <= now:
            what = "baseline measure missing" if row.measured_at is None else "follow-up due"
            items.append(Item(row, what, since))
    return items[:QUEUE_LIMIT]


async def failed_deliveries(conn: AsyncConnection, scope: OperatorScope) -> list[dict[str, Any]]:
    items, _ = await history.list_deliveries(
        conn, scope=scope, state="failed", before_id=None, limit=QUEUE_LIMIT
    )
    return items
