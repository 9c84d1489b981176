"""Which free slots a patient is offered in the assistant conversation: a pure policy.

Threat: offering times the patient said they cannot make (they answered "weekday mornings"
and get an evening), three slots on one crowded day when the fortnight has room, or a slot
too soon to reach. ``choose_slots`` takes the physiotherapist's free slots
(``availability.Schedule.free_slots``), the patient's availability answer and the time, and
returns at most ``OFFER_SIZE`` of them, earliest first:

- only slots starting between ``now + LEAD_TIME`` and ``now + OFFER_HORIZON``;
- only slots whose start (Lagos time) falls in one of the periods the patient named
  (``PERIODS``, the intake's answers: weekday mornings 08-12, afternoons 12-16, evenings
  16-20, weekends all day); an answer naming no known period fits any time;
- the earliest slot of each day first, so the offer spreads over different days; only when
  fewer days have a fitting slot are more slots of the same days added, earliest first.

An offer is held for ``OFFER_TTL``; after that its numbers book nothing. Time is always
passed in; nothing here reads the clock.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime, timedelta

from rehabref.care.availability import LAGOS, LEAD_TIME, Slot
from rehabref.clock import as_utc

OFFER_SIZE = 3
OFFER_HORIZON = timedelta(days=14)
OFFER_TTL = timedelta(hours=48)

_WEEKDAYS = frozenset(range(5))
_WEEKEND = frozenset({5, 6})
# The intake's availability answers (``intake.service.AVAILABILITY_SLOTS``, the choices'
# descriptions in ``intake.phrases``) as Lagos weekdays and [start, end) minutes of the day.
PERIODS: dict[str, tuple[frozenset[int], int, int]] = {
    "weekday_mornings": (_WEEKDAYS, 8 * 60, 12 * 60),
    "weekday_afternoons": (_WEEKDAYS, 12 * 60, 16 * 60),
    "weekday_evenings": (_WEEKDAYS, 16 * 60, 20 * 60),
    "weekends": (_WEEKEND, 0, 24 * 60),
}


def fits(slot: Slot, availability: Iterable[str]) -> bool:
    """Whether the slot starts in one of the named periods (any time when none is known)."""
    periods = [PERIODS[name] for name in availability if name in PERIODS]
    if not periods:
        return True
    local = as_utc(slot.starts_at).astimezone(LAGOS)
    minute = local.hour * 60 + local.minute
    return any(local.weekday() in days and start <= minute < end for days, start, end in periods)


def choose_slots(
    free: Iterable[Slot],
    *,
    availability: Iterable[str],
    now: datetime,
    size: int = OFFER_SIZE,
    horizon: timedelta = OFFER_HORIZON,
) -> tuple[Slot, ...]:
    """At most ``size`` slots to offer, earliest first, spread over different days."""
    wanted = tuple(availability)
    earliest, latest = as_utc(now) + LEAD_TIME, as_utc(now) + horizon
    fitting = sorted(
        {
            slot
            for slot in free
            if earliest <= as_utc(slot.starts_at) < latest and fits(slot, wanted)
        },
        key=lambda slot: as_utc(slot.starts_at),
    )
    first_of_day: list[Slot] = []
    days_seen: set[date] = set()
    for slot in fitting:
        if slot.local_day not in days_seen:
            days_seen.add(slot.local_day)
            first_of_day.append(slot)
    picked = first_of_day[:size]
    picked += [slot for slot in fitting if slot not in picked][: size - len(picked)]
    return tuple(sorted(picked, key=lambda slot: as_utc(slot.starts_at)))


def expires_at(now: datetime) -> datetime:
    return as_utc(now) + OFFER_TTL
