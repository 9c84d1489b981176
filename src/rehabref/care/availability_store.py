"""Physiotherapists' availability in the database: weekly windows, days off, and the
``Schedule`` (``availability.py``) of one physiotherapist over a period, with its bookings.

``FreeSlotFinder`` answers matching's question (which candidates have a free slot soon), wired
into ``matching.roster.RosterSources`` at start-up: matching never imports care.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, timedelta

from sqlalchemy import ColumnElement, delete, insert, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.care.availability import DaysOff, Schedule, WeeklyWindow, local_day
from rehabref.care.rows import AvailabilityExceptionRow, AvailabilityRuleRow
from rehabref.clock import as_utc
from rehabref.db import table
from rehabref.ids import new_id
from rehabref.tables.scheduling import Appointment, AvailabilityException, AvailabilityRule

rules = table(AvailabilityRule)
exceptions = table(AvailabilityException)
appointments = table(Appointment)
HOLDING = ("booked", "attended")
# How far ahead matching looks for a free slot.
MATCHING_HORIZON = timedelta(days=14)


def window_of(row: AvailabilityRuleRow) -> WeeklyWindow:
    return WeeklyWindow(
        weekday=row.weekday,
        start_minute=row.start_minute,
        end_minute=row.end_minute,
        slot_minutes=row.slot_minutes,
        max_visits=row.max_visits,
    )


async def windows_of(conn: AsyncConnection, physio_id: str) -> list[AvailabilityRuleRow]:
    query = (
        select(rules)
        .where(rules.c.physio_id == physio_id)
        .order_by(rules.c.weekday, rules.c.start_minute)
    )
    return list((await conn.execute(query)).all())


async def replace_windows(
    conn: AsyncConnection,
    *,
    physio_id: str,
    windows: Sequence[WeeklyWindow],
    actor: str,
    now: datetime,
) -> None:
    """The physiotherapist's weekly windows become ``windows`` (booked visits stay)."""
    await conn.execute(delete(rules).where(rules.c.physio_id == physio_id))
    if windows:
        await conn.execute(
            insert(rules),
            [
                {
                    "id": new_id("avr"),
                    "physio_id": physio_id,
                    "weekday": w.weekday,
                    "start_minute": w.start_minute,
                    "end_minute": w.end_minute,
                    "slot_minutes": w.slot_minutes,
                    "max_visits": w.max_visits,
                    "created_by": actor,
                    "created_at": now,
                }
                for w in windows
            ],
        )


async def add_days_off(
    conn: AsyncConnection,
    *,
    physio_id: str | None,
    off: DaysOff,
    actor: str,
    now: datetime,
) -> str:
    exception_id = new_id("avx")
    await conn.execute(
        insert(exceptions),
        {
            "id": exception_id,
            "physio_id": physio_id,
            "kind": off.kind,
            "starts_on": off.starts_on,
            "ends_on": off.ends_on,
            "reason": off.reason,
            "created_by": actor,
            "created_at": now,
        },
    )
    return exception_id


async def remove_days_off(conn: AsyncConnection, exception_id: str) -> bool:
    result = await conn.execute(delete(exceptions).where(exceptions.c.id == exception_id))
    return bool(result.rowcount)


async def days_off_rows(
    conn: AsyncConnection, *, physio_id: str | None, since: date
) -> list[AvailabilityExceptionRow]:
    """Days off ending on or after ``since``: the physiotherapist's and public holidays."""
    owner: ColumnElement[bool] = exceptions.c.physio_id.is_(None)
    if physio_id is not None:
        owner = or_(owner, exceptions.c.physio_id == physio_id)
    query = (
        select(exceptions)
        .where(owner, exceptions.c.ends_on >= since)
        .order_by(exceptions.c.starts_on, exceptions.c.id)
    )
    return list((await conn.execute(query)).all())


def _days_off(row: AvailabilityExceptionRow) -> DaysOff:
    return DaysOff(starts_on=row.starts_on, ends_on=row.ends_on, kind=row.kind, reason=row.reason)


async def schedule_of(
    conn: AsyncConnection, *, physio_id: str, start: datetime, end: datetime
) -> Schedule:
    """The physiotherapist's schedule with the visits booked between ``start`` and ``end``."""
    schedules = await schedules_of(conn, physio_ids=[physio_id], start=start, end=end)
    return schedules[physio_id]


async def schedules_of(
    conn: AsyncConnection, *, physio_ids: Sequence[str], start: datetime, end: datetime
) -> dict[str, Schedule]:
    """Each physiotherapist's schedule between ``start`` and ``end``: three queries whatever
    the number of physiotherapists (matching asks about every candidate at once)."""
    ids = list(dict.fromkeys(physio_ids))
    windows: dict[str, list[WeeklyWindow]] = {physio_id: [] for physio_id in ids}
    window_rows = await conn.execute(
        select(rules)
        .where(rules.c.physio_id.in_(ids))
        .order_by(rules.c.physio_id, rules.c.weekday, rules.c.start_minute)
    )
    for row in window_rows:
        windows[row.physio_id].append(window_of(row))
    since = local_day(start) - timedelta(days=1)
    off_rows = await conn.execute(
        select(exceptions)
        .where(
            or_(exceptions.c.physio_id.is_(None), exceptions.c.physio_id.in_(ids)),
            exceptions.c.ends_on >= since,
        )
        .order_by(exceptions.c.starts_on, exceptions.c.id)
    )
    public: list[DaysOff] = []
    own: dict[str, list[DaysOff]] = {physio_id: [] for physio_id in ids}
    for row in off_rows:
        (public if row.physio_id is None else own[row.physio_id]).append(_days_off(row))
    booked_rows = await conn.execute(
        select(appointments.c.physio_id, appointments.c.starts_at).where(
            appointments.c.physio_id.in_(ids),
            appointments.c.status.in_(HOLDING),
            appointments.c.starts_at >= as_utc(start) - timedelta(days=1),
            appointments.c.starts_at < as_utc(end) + timedelta(days=1),
        )
    )
    taken: dict[str, set[datetime]] = {physio_id: set() for physio_id in ids}
    for physio_id, when in booked_rows:
        taken[physio_id].add(as_utc(when))
    schedules = {}
    for physio_id in ids:
        per_day: dict[date, int] = {}
        for when in taken[physio_id]:
            per_day[local_day(when)] = per_day.get(local_day(when), 0) + 1
        schedules[physio_id] = Schedule(
            windows=tuple(windows[physio_id]),
            days_off=tuple(public + own[physio_id]),
            taken=frozenset(taken[physio_id]),
            visits_per_day=per_day,
        )
    return schedules


class FreeSlotFinder:
    """Matching's availability filter: the physiotherapists who published weekly windows
    and have no free slot in the next ``MATCHING_HORIZON`` (full, or on leave). Those who
    never published windows are not filtered: their visits are arranged by phone."""

    async def fully_booked(
        self, conn: AsyncConnection, *, physio_ids: Sequence[str], now: datetime
    ) -> set[str]:
        if not physio_ids:
            return set()
        published = (
            await conn.execute(
                select(rules.c.physio_id).where(rules.c.physio_id.in_(physio_ids)).distinct()
            )
        ).scalars()
        end = now + MATCHING_HORIZON
        schedules = await schedules_of(conn, physio_ids=list(published), start=now, end=end)
        return {
            physio_id
            for physio_id, schedule in schedules.items()
            if not schedule.has_free_slot(start=now, end=end, now=now)
        }
