"""The choice of slots offered in the conversation, as a pure policy: no clock, no database.

Times are written in Lagos time (WAT); 2026-11-23 is a Monday."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from rehabref.care.availability import LAGOS, Schedule, Slot, WeeklyWindow
from rehabref.care.slot_choice import (
    OFFER_HORIZON,
    OFFER_SIZE,
    OFFER_TTL,
    PERIODS,
    choose_slots,
    expires_at,
    fits,
)
from rehabref.intake.answers import offered_number
from rehabref.intake.prompts import booking_handover, slot_offer
from rehabref.intake.service import AVAILABILITY_SLOTS

NOW = datetime(2026, 11, 23, 6, 0, tzinfo=LAGOS)  # Monday 06:00


def at(day: int, hour: int, minute: int = 0) -> Slot:
    """A one-hour slot on November ``day``, ``hour`` o'clock Lagos time."""
    start = datetime(2026, 11, day, hour, minute, tzinfo=LAGOS).astimezone(UTC)
    return Slot(start, start + timedelta(hours=1))


def starts(slots: tuple[Slot, ...]) -> list[tuple[int, int]]:
    local = [slot.starts_at.astimezone(LAGOS) for slot in slots]
    return [(when.day, when.hour) for when in local]


def test_the_periods_are_the_intakes_availability_answers():
    assert set(PERIODS) == set(AVAILABILITY_SLOTS)


@pytest.mark.parametrize(
    ("slot", "availability", "expected"),
    [
        (at(23, 8), ("weekday_mornings",), True),
        (at(23, 11, 30), ("weekday_mornings",), True),
        (at(23, 12), ("weekday_mornings",), False),  # noon is the afternoon
        (at(23, 7), ("weekday_mornings",), False),
        (at(23, 12), ("weekday_afternoons",), True),
        (at(23, 16), ("weekday_afternoons",), False),
        (at(23, 16), ("weekday_evenings",), True),
        (at(23, 20), ("weekday_evenings",), False),
        (at(28, 9), ("weekday_mornings",), False),  # Saturday is no weekday
        (at(28, 9), ("weekends",), True),
        (at(29, 19), ("weekends",), True),  # Sunday evening
        (at(27, 19), ("weekends",), False),  # Friday evening
        (at(27, 19), ("weekends", "weekday_evenings"), True),
        (at(27, 3), (), True),  # nothing stated: any time
        (at(27, 3), ("at_night",), True),  # nothing known stated: any time
    ],
)
def test_a_slot_fits_when_it_starts_in_a_named_period(slot, availability, expected):
    assert fits(slot, availability) is expected


def test_the_earliest_fitting_slot_of_each_day_spread_over_three_days():
    free = [at(23, 9), at(23, 10), at(23, 11), at(24, 10), at(24, 14), at(25, 8), at(26, 9)]
    chosen = choose_slots(free, availability=("weekday_mornings",), now=NOW)
    assert starts(chosen) == [(23, 9), (24, 10), (25, 8)]
    assert len(chosen) == OFFER_SIZE


def test_fewer_days_than_slots_fill_up_with_the_earliest_of_the_same_days():
    free = [at(23, 11), at(23, 9), at(23, 10), at(24, 10), at(23, 8)]
    chosen = choose_slots(free, availability=("weekday_mornings",), now=NOW)
    assert starts(chosen) == [(23, 8), (23, 9), (24, 10)]


def test_slots_too_soon_or_beyond_the_horizon_are_not_offered():
    soon = at(23, 7)  # one hour after NOW: inside the lead time
    last_in = Slot(NOW + OFFER_HORIZON - timedelta(hours=1), NOW + OFFER_HORIZON)
    beyond = Slot(NOW + OFFER_HORIZON, NOW + OFFER_HORIZON + timedelta(hours=1))
    chosen = choose_slots([soon, beyond, last_in], availability=(), now=NOW)
    assert chosen == (last_in,)


def test_nothing_fitting_offers_nothing_and_fewer_fitting_offers_fewer():
    evenings = [at(23, 17), at(24, 18)]
    assert choose_slots(evenings, availability=("weekday_mornings",), now=NOW) == ()
    assert choose_slots([], availability=("weekends",), now=NOW) == ()
    two = choose_slots(evenings, availability=("weekday_evenings",), now=NOW)
    assert starts(two) == [(23, 17), (24, 18)]


def test_a_slot_listed_twice_is_offered_once_and_the_size_is_respected():
    chosen = choose_slots([at(23, 9), at(23, 9), at(24, 9)], availability=(), now=NOW, size=2)
    assert starts(chosen) == [(23, 9), (24, 9)]


def test_the_schedules_free_slots_feed_the_choice():
    weekdays = tuple(WeeklyWindow(day, 8 * 60, 18 * 60, 60) for day in range(5))
    schedule = Schedule(
        windows=weekdays, days_off=(), taken=frozenset({at(24, 8).starts_at}), visits_per_day={}
    )
    free = schedule.free_slots(start=NOW, end=NOW + OFFER_HORIZON, now=NOW)
    chosen = choose_slots(free, availability=("weekday_afternoons", "weekends"), now=NOW)
    assert starts(chosen) == [(23, 12), (24, 12), (25, 12)]
    mornings = choose_slots(free, availability=("weekday_mornings",), now=NOW)
    assert starts(mornings) == [(23, 8), (24, 9), (25, 8)]  # 24th at 08:00 is taken


def test_an_offer_is_held_for_its_ttl():
    assert expires_at(NOW) == NOW.astimezone(UTC) + OFFER_TTL
    assert timedelta(hours=24) <= OFFER_TTL <= timedelta(hours=72)


@pytest.mark.parametrize(
    ("text", "offered", "expected"),
    [
        ("2", 3, 2),
        ("2.", 3, 2),
        ("Option 2 please", 3, 2),
        ("two", 3, 2),
        ("the first one", 3, 1),
        ("the second one", 3, 2),
        ("3", 3, 3),
        ("3", 2, None),  # not shown
        ("4", 3, None),
        ("0", 3, 0),
        ("none of them", 3, 0),
        ("No one fit", 3, 0),  # Pidgin: none fits, not "one"
        ("e no fit o", 1, 0),
        ("1 or 2", 3, None),  # two numbers: not guessed
        ("2 4", 3, None),
        ("Tuesday", 3, None),
        ("", 3, None),
        (None, 3, None),
    ],
)
def test_a_reply_names_one_offered_number_or_none(text, offered, expected):
    assert offered_number(text, offered) == expected


def test_the_offer_numbers_the_times_and_says_how_to_answer_in_both_languages():
    times = ["Tue 24 Nov, 10:00", "Wed 25 Nov, 09:00", "Thu 26 Nov, 08:00"]
    english = slot_offer("en", times=times, physio_name="Kemi", first_name="Amaka")
    assert english.text.splitlines() == [
        "Thank you, Amaka! We have your answers. Kemi can see you at:",
        "1. Tue 24 Nov, 10:00",
        "2. Wed 25 Nov, 09:00",
        "3. Thu 26 Nov, 08:00",
        "Reply 1, 2 or 3, or 0 for other times.",
    ]
    assert english.choices == ()  # written out: the same numbers on WhatsApp and SMS
    pidgin = slot_offer("pcm", times=times[:2], physio_name="Kemi", first_name="Amaka", again=True)
    assert pidgin.text.splitlines() == [
        "Sorry, person don take that time already. Kemi fit see you for:",
        "1. Tue 24 Nov, 10:00",
        "2. Wed 25 Nov, 09:00",
        "Reply 1 or 2. If none fit you, reply 0.",
    ]
    assert slot_offer("en", times=times[:1], physio_name="K", first_name="A").text.endswith(
        "Reply 1, or 0 for other times."
    )
    for wrong in ([], [*times, "Fri 27 Nov, 08:00"]):
        with pytest.raises(ValueError):
            slot_offer("en", times=wrong, physio_name="K", first_name="A")
    assert (
        "coordinator go call you" in booking_handover("pcm", "offer_expired", first_name="A").text
    )
    assert "first visit" in booking_handover("en", "offer_none", first_name="Amaka").text
