"""The physiotherapist's visits: only their own (every query filters on the signed-in
physiotherapist), and only what a visit needs (first name, area, care mode, the patient's
availability and home-or-clinic answers) — no surname, phone, diagnosis or partner."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.care.availability import LAGOS
from rehabref.clock import as_utc
from rehabref.db import table
from rehabref.tables.care import CareSession
from rehabref.tables.intake import AssistantSession
from rehabref.tables.referrals import Referral

_sessions = table(CareSession)
_referrals = table(Referral)
_assistant = table(AssistantSession)
OPEN = ("scheduled", "in_progress")
_COLUMNS = (
    _sessions.c.id,
    _sessions.c.referral_id,
    _sessions.c.status,
    _sessions.c.modality,
    _sessions.c.scheduled_at,
    _sessions.c.check_in_at,
    _sessions.c.check_in_refusal,
    _sessions.c.session_number,
    _referrals.c.patient_first_name,
    _referrals.c.patient_area,
    _referrals.c.patient_city,
    _referrals.c.care_mode,
)


def week_bounds(now: datetime) -> tuple[datetime, datetime, datetime]:
    """Start of today, end of today, and seven days on, in Lagos days (as UTC)."""
    today = as_utc(now).astimezone(LAGOS).date()
    start = datetime.combine(today, time(0), tzinfo=LAGOS)
    return as_utc(start), as_utc(start + timedelta(days=1)), as_utc(start + timedelta(days=7))


async def upcoming(conn: AsyncConnection, *, physio_id: str, now: datetime) -> list[Any]:
    start, _, end = week_bounds(now)
    query = (
        select(*_COLUMNS)
        .join(_referrals, _referrals.c.id == _sessions.c.referral_id)
        .where(
            _sessions.c.physio_id == physio_id,
            _sessions.c.status.in_(OPEN),
            _sessions.c.scheduled_at >= start - timedelta(days=1),
            _sessions.c.scheduled_at < end,
            _referrals.c.erased_at.is_(None),
        )
        .order_by(_sessions.c.scheduled_at, _sessions.c.id)
    )
    return list((await conn.execute(query)).all())


async def own_visit(conn: AsyncConnection, *, physio_id: str, session_id: str) -> Any:
    """The visit when it is this physiotherapist's and its patient's data is not erased, else
    None (a 404 to them)."""
    query = (
        select(*_COLUMNS)
        .join(_referrals, _referrals.c.id == _sessions.c.referral_id)
        .where(
            _sessions.c.id == session_id,
            _sessions.c.physio_id == physio_id,
            _referrals.c.erased_at.is_(None),
        )
    )
    return (await conn.execute(query)).first()


async def intake_answers(conn: AsyncConnection, referral_id: str) -> dict[str, str | None]:
    row = (
        await conn.execute(
            select(_assistant.c.availability, _assistant.c.care_mode, _assistant.c.area)
            .where(_assistant.c.referral_id == referral_id, _assistant.c.completed_at.is_not(None))
            .order_by(_assistant.c.completed_at.desc())
            .limit(1)
        )
    ).first()
    if row is None:
        return {"availability": None, "care_mode": None, "area": None}
    return {
        "availability": (row.availability or "").replace("_", " ").replace(",", ", ") or None,
        "care_mode": (row.care_mode or "").replace("_", " ") or None,
        "area": row.area,
    }
