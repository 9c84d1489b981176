"""Physiotherapists' availability in the database: weekly windows, days off, and the
``Schedule`` (``availability.py``) of one physiotherapist over a period, with its bookings.

``FreeSlotFinder`` answers matching's question (which candidates have a free slot soon), wired
into ``matching.roster.RosterSources`` at start-up: matching never imports care.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Row, delete, insert, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.care.availability import DaysOff, Schedule, WeeklyWindow, local_day
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


def window_of(row: Row[Any]) -> WeeklyWindow:
    return WeeklyWindow(
        weekday=row.weekday,
        start_minute=row.start_minute,
        end_minute=row.end_minute,
        slot_minutes=row.slot_minutes,
        max_visits=row.max_visits,
    )


async def windows_of(conn: AsyncConnection, physio_id: str) -> list[Row[Any]]:
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
) -> list[Row[Any]]:
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


def _days_off(row: Row[Any]) -> DaysOff:
    return DaysOff(starts_on=row.starts_on, ends_on=row.ends_on, kind=row.kind, reason=row.reason)


async def schedule_of(
    conn: AsyncConnection, *, physio_id: str, start: datetime, end: datetime
) -> Schedule:
    """The physiotherapist's schedule with the visits booked between ``start`` and ``end``."""
    windows = tuple(window_of(row) for row in await windows_of(conn, physio_id))
    days_off = tuple(
        _days_off(row)
        for row in await days_off_rows(
            conn, physio_id=physio_id, since=local_day(start) - timedelta(days=1)
        )
    )
    booked = (
        await conn.execute(
            select(appointments.c.starts_at).where(
                appointments.c.physio_id == physio_id,
                appointments.c.status.in_(HOLDING),
                appointments.c.starts_at >= as_utc(start) - timedelta(days=1),
                appointments.c.starts_at < as_utc(end) + timedelta(days=1),
            )
        )
    ).scalars()
    taken = frozenset(as_utc(when) for when in booked)
    per_day: dict[date, int] = {}
    for when in taken:
        per_day[local_day(when)] = per_day.get(local_day(when), 0) + 1
    return Schedule(windows=windows, days_off=days_off, taken=taken, visits_per_day=per_day)


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
        full: set[str] = set()
        for physio_id in published:
            schedule = await schedule_of(
                conn, physio_id=physio_id, start=now, end=now + MATCHING_HORIZON
            )
            if not schedule.free_slots(start=now, end=now + MATCHING_HORIZON, now=now):
                full.add(physio_id)
        return full
