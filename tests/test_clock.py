"""clock: the interface's timestamp format, written by msgspec instead of isoformat."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from rehabref.clock import as_utc, epoch_ms, iso


def reference_iso(value: datetime) -> str:
    """The format as the standard library writes it: millisecond precision, truncated."""
    return as_utc(value).isoformat(timespec="milliseconds")[:-6] + "Z"


def test_whole_seconds_get_a_zero_millisecond_part():
    assert iso(datetime(2026, 11, 23, 9, 30, tzinfo=UTC)) == "2026-11-23T09:30:00.000Z"


def test_microseconds_are_cut_to_milliseconds_not_rounded():
    value = datetime(2026, 11, 23, 9, 30, 5, 999_999, tzinfo=UTC)
    assert iso(value) == "2026-11-23T09:30:05.999Z"
    assert iso(value.replace(microsecond=1)) == "2026-11-23T09:30:05.000Z"


def test_other_offsets_are_converted_and_naive_values_are_taken_as_utc():
    lagos = timezone(timedelta(hours=1))
    assert iso(datetime(2026, 1, 1, 0, 15, tzinfo=lagos)) == "2025-12-31T23:15:00.000Z"
    assert iso(datetime(2026, 1, 1, 0, 15)) == "2026-01-01T00:15:00.000Z"


def test_none_stays_none():
    assert iso(None) is None


@given(
    st.datetimes(
        min_value=datetime(1, 1, 2),
        max_value=datetime(9999, 12, 30),
        timezones=st.sampled_from([UTC, timezone(timedelta(hours=-5, minutes=-30))]) | st.none(),
    )
)
def test_the_same_text_as_the_standard_library_for_any_time(value: datetime):
    assert iso(value) == reference_iso(value)


def test_epoch_milliseconds():
    assert epoch_ms(datetime(1970, 1, 1, 0, 0, 1, 500_000, tzinfo=UTC)) == 1500
