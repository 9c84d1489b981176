"""Availability as a pure policy: which slots a physiotherapist offers, and which are free.

Threat: a visit booked at a time the physiotherapist never offered (a day off, a public
holiday, outside their hours, beyond the day's visit cap, or already given to another
patient). Every booking is checked here against the schedule; the database's unique index on
(physiotherapist, slot start) is the last word on "already given" (``tables/scheduling.py``).

Rules, all in Lagos time (WAT, UTC+1 all year: Nigeria has no daylight saving):

- a weekly window (weekday 0 = Monday, ``start_minute``..``end_minute``) is cut into
  back-to-back slots of ``slot_minutes``; a slot that would run past the window's end is not
  offered;
- a day inside an exception (leave of this physiotherapist, or a public holiday for everyone)
  offers nothing;
- ``max_visits`` caps the visits of that day (the smallest cap of the day's windows): a home
  visit round has travel between slots, so a physiotherapist may offer eight slots but take
  five visits;
- a slot starting less than ``LEAD_TIME`` from now is not offered (nobody can get there).

Time is always passed in; nothing here reads the clock.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, timezone

from rehabref.clock import as_utc

LAGOS = timezone(timedelta(hours=1), "WAT")
LEAD_TIME = timedelta(hours=2)
MINUTES_PER_DAY = 24 * 60
SLOT_MINUTES = frozenset({15, 20, 30, 45, 60, 90, 120})


@dataclass(frozen=True)
class WeeklyWindow:
    weekday: int
    start_minute: int
    end_minute: int
    slot_minutes: int
    max_visits: int | None = None


@dataclass(frozen=True)
class DaysOff:
    starts_on: date
    ends_on: date  # inclusive
    kind: str  # leave | public_holiday
    reason: str

    def covers(self, day: date) -> bool:
        return self.starts_on <= day <= self.ends_on


@dataclass(frozen=True)
class Slot:
    starts_at: datetime  # UTC
    ends_at: datetime

    @property
    def local_day(self) -> date:
        return local_day(self.starts_at)


def local_day(when: datetime) -> date:
    return as_utc(when).astimezone(LAGOS).date()


def window_problem(window: WeeklyWindow) -> str | None:
    """Why a window is not a valid weekly window, or None."""
    if not 0 <= window.weekday <= 6:
        return "weekday must be 0 (Monday) to 6 (Sunday)."
    if not 0 <= window.start_minute < window.end_minute <= MINUTES_PER_DAY:
        return "start must be before end, within one day."
    if window.slot_minutes not in SLOT_MINUTES:
        return f"slot_minutes must be one of {sorted(SLOT_MINUTES)}."
    if window.end_minute - window.start_minute < window.slot_minutes:
        return "The window is shorter than one slot."
    if window.max_visits is not None and not 1 <= window.max_visits <= 50:
        return "max_visits must be 1 to 50."
    return None


def overlapping(windows: Iterable[WeeklyWindow]) -> bool:
    """Whether two windows of the same weekday overlap (their slots would collide)."""
    by_day: dict[int, list[WeeklyWindow]] = {}
    for window in windows:
        by_day.setdefault(window.weekday, []).append(window)
    for day in by_day.values():
        day.sort(key=lambda w: w.start_minute)
        if any(a.end_minute > b.start_minute for a, b in itertools.pairwise(day)):
            return True
    return False


def day_cap(windows: Iterable[WeeklyWindow], day: date) -> int | None:
    caps = [w.max_visits for w in windows if w.weekday == day.weekday() and w.max_visits]
    return min(caps) if caps else None


def day_slots(windows: Iterable[WeeklyWindow], day: date) -> list[Slot]:
    """Every slot the weekly windows offer on a Lagos calendar day, in order."""
    slots: list[Slot] = []
    midnight = datetime.combine(day, time(0), tzinfo=LAGOS)
    for window in sorted(windows, key=lambda w: w.start_minute):
        if window.weekday != day.weekday():
            continue
        minute = window.start_minute
        while minute + window.slot_minutes <= window.end_minute:
            start = (midnight + timedelta(minutes=minute)).astimezone(UTC)
            slots.append(Slot(start, start + timedelta(minutes=window.slot_minutes)))
            minute += window.slot_minutes
    return slots


def day_off(days_off: Iterable[DaysOff], day: date) -> DaysOff | None:
    return next((off for off in days_off if off.covers(day)), None)


@dataclass(frozen=True)
class Schedule:
    """A physiotherapist's weekly windows and days off, with what is already booked."""

    windows: tuple[WeeklyWindow, ...]
    days_off: tuple[DaysOff, ...]
    taken: frozenset[datetime]  # UTC starts of slots holding a visit
    visits_per_day: Mapping[date, int]

    def free_slots(self, *, start: datetime, end: datetime, now: datetime) -> list[Slot]:
        """Free slots starting in [start, end), not sooner than ``LEAD_TIME`` after now."""
        earliest = max(as_utc(start), as_utc(now) + LEAD_TIME)
        free: list[Slot] = []
        day = local_day(start) - timedelta(days=1)
        while day <= local_day(end):
            free.extend(
                slot for slot in self._open_slots(day) if earliest <= slot.starts_at < as_utc(end)
            )
            day += timedelta(days=1)
        return free

    def has_free_slot(self, *, start: datetime, end: datetime, now: datetime) -> bool:
        """Whether any slot in [start, end) is free: ``free_slots`` that stops at the first."""
        earliest = max(as_utc(start), as_utc(now) + LEAD_TIME)
        day = local_day(start) - timedelta(days=1)
        while day <= local_day(end):
            if any(earliest <= slot.starts_at < as_utc(end) for slot in self._open_slots(day)):
                return True
            day += timedelta(days=1)
        return False

    def _open_slots(self, day: date) -> list[Slot]:
        if day_off(self.days_off, day) is not None:
            return []
        cap = day_cap(self.windows, day)
        if cap is not None and self.visits_per_day.get(day, 0) >= cap:
            return []
        return [slot for slot in day_slots(self.windows, day) if slot.starts_at not in self.taken]

    def refusal(self, starts_at: datetime, *, now: datetime) -> str | None:
        """Why a visit cannot be booked at ``starts_at``, or None when the slot is free."""
        when = as_utc(starts_at)
        day = local_day(when)
        slot = next((s for s in day_slots(self.windows, day) if s.starts_at == when), None)
        if slot is None:
            return "The physiotherapist offers no slot starting at this time."
        off = day_off(self.days_off, day)
        if off is not None:
            return f"The physiotherapist is not working that day ({off.kind.replace('_', ' ')})."
        if when < as_utc(now) + LEAD_TIME:
            return "The slot starts too soon to be booked."
        if when in self.taken:
            return "The slot is already booked."
        cap = day_cap(self.windows, day)
        if cap is not None and self.visits_per_day.get(day, 0) >= cap:
            return "The physiotherapist's visits for that day are full."
        return None

    def slot_at(self, starts_at: datetime) -> Slot | None:
        when = as_utc(starts_at)
        slots = day_slots(self.windows, local_day(when))
        return next((slot for slot in slots if slot.starts_at == when), None)
