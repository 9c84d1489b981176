"""The availability policy as pure functions: slots, days off, caps, lead time."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rehabref.care.availability import (
    DaysOff,
    Schedule,
    WeeklyWindow,
    day_slots,
    overlapping,
    window_problem,
)

MONDAY = date(2026, 11, 30)
MORNING = WeeklyWindow(weekday=0, start_minute=9 * 60, end_minute=12 * 60 + 30, slot_minutes=60)


def schedule(*, days_off=(), taken=(), per_day=None, windows=(MORNING,)) -> Schedule:
    return Schedule(
        windows=tuple(windows),
        days_off=tuple(days_off),
        taken=frozenset(taken),
        visits_per_day=per_day or {},
    )


def utc(day: date, hour: int, minute: int = 0) -> datetime:
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=UTC)


def test_a_window_is_cut_into_whole_slots_in_lagos_time():
    slots = day_slots([MORNING], MONDAY)
    # 09:00, 10:00, 11:00 Lagos = 08:00, 09:00, 10:00 UTC; 12:00-13:00 would pass 12:30.
    assert [s.starts_at for s in slots] == [utc(MONDAY, 8), utc(MONDAY, 9), utc(MONDAY, 10)]
    assert slots[0].ends_at - slots[0].starts_at == timedelta(hours=1)
    assert day_slots([MORNING], MONDAY + timedelta(days=1)) == []


def test_free_slots_skip_taken_slots_and_the_lead_time():
    week_before = utc(MONDAY, 0) - timedelta(days=7)
    free = schedule(taken=[utc(MONDAY, 9)]).free_slots(
        start=utc(MONDAY, 0) - timedelta(days=1), end=utc(MONDAY, 23), now=week_before
    )
    assert [s.starts_at for s in free] == [utc(MONDAY, 8), utc(MONDAY, 10)]
    soon = schedule().free_slots(start=utc(MONDAY, 0), end=utc(MONDAY, 23), now=utc(MONDAY, 7))
    assert [s.starts_at for s in soon] == [utc(MONDAY, 9), utc(MONDAY, 10)]


def test_leave_and_public_holidays_offer_nothing():
    off = DaysOff(starts_on=MONDAY, ends_on=MONDAY, kind="public_holiday", reason="Holiday")
    plan = schedule(days_off=[off])
    earlier = utc(MONDAY, 0) - timedelta(days=3)
    assert plan.free_slots(start=utc(MONDAY, 0), end=utc(MONDAY, 23), now=earlier) == []
    assert "public holiday" in (plan.refusal(utc(MONDAY, 8), now=earlier) or "")


def test_the_day_cap_closes_the_day():
    capped = WeeklyWindow(0, 9 * 60, 17 * 60, 60, max_visits=2)
    plan = schedule(windows=[capped], taken=[utc(MONDAY, 8), utc(MONDAY, 9)], per_day={MONDAY: 2})
    earlier = utc(MONDAY, 0) - timedelta(days=3)
    assert plan.free_slots(start=utc(MONDAY, 0), end=utc(MONDAY, 23), now=earlier) == []
    assert plan.refusal(utc(MONDAY, 12), now=earlier) == (
        "The physiotherapist's visits for that day are full."
    )


@pytest.mark.parametrize(
    ("when", "expected"),
    [
        (utc(MONDAY, 8), None),
        (utc(MONDAY, 8, 30), "The physiotherapist offers no slot starting at this time."),
        (utc(MONDAY, 9), "The slot is already booked."),
        (utc(MONDAY, 15), "The physiotherapist offers no slot starting at this time."),
    ],
)
def test_refusal_names_the_reason(when, expected):
    plan = schedule(taken=[utc(MONDAY, 9)])
    assert plan.refusal(when, now=utc(MONDAY, 0) - timedelta(days=1)) == expected


def test_a_slot_starting_too_soon_is_refused():
    assert schedule().refusal(utc(MONDAY, 8), now=utc(MONDAY, 7)) == (
        "The slot starts too soon to be booked."
    )


def test_window_validation_and_overlap():
    assert window_problem(MORNING) is None
    assert window_problem(WeeklyWindow(7, 0, 60, 60)) is not None
    assert window_problem(WeeklyWindow(0, 600, 540, 60)) is not None
    assert window_problem(WeeklyWindow(0, 540, 560, 60)) == "The window is shorter than one slot."
    assert window_problem(WeeklyWindow(0, 540, 600, 25)) is not None
    assert overlapping([MORNING, WeeklyWindow(0, 12 * 60, 14 * 60, 60)])
    assert not overlapping([MORNING, WeeklyWindow(0, 13 * 60, 14 * 60, 60)])
    assert not overlapping([MORNING, WeeklyWindow(1, 9 * 60, 12 * 60, 60)])


@given(
    taken_hours=st.sets(st.sampled_from([8, 9, 10])),
    cap=st.none() | st.integers(min_value=1, max_value=3),
    holiday=st.booleans(),
    now_offset_hours=st.integers(min_value=-200, max_value=40),
    span_hours=st.integers(min_value=1, max_value=72),
)
def test_has_free_slot_agrees_with_free_slots(
    taken_hours, cap, holiday, now_offset_hours, span_hours
):
    """Matching's short-circuit answers exactly what listing the free slots would."""
    window = WeeklyWindow(0, 9 * 60, 12 * 60 + 30, 60, max_visits=cap)
    taken = [utc(MONDAY, hour) for hour in taken_hours]
    off = (
        [DaysOff(starts_on=MONDAY, ends_on=MONDAY, kind="leave", reason="Leave")] if holiday else []
    )
    plan = schedule(windows=[window], taken=taken, per_day={MONDAY: len(taken)}, days_off=off)
    start = utc(MONDAY, 0) - timedelta(hours=12)
    end = start + timedelta(hours=span_hours)
    now = utc(MONDAY, 0) + timedelta(hours=now_offset_hours)
    listed = plan.free_slots(start=start, end=end, now=now)
    assert plan.has_free_slot(start=start, end=end, now=now) == bool(listed)
