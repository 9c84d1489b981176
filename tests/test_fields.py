"""Field rules shared by request schemas (rehabref.fields), tested directly."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import phonenumbers
import pytest

from rehabref import fields


@pytest.mark.parametrize("phone", ["+2348031234567", "+447911123456", "+14155552671"])
def test_e164_accepts_valid_numbers(phone):
    assert fields.e164(phone) == phone


@pytest.mark.parametrize(
    "phone",
    [
        "2348031234567",
        "08031234567",
        "+234 803 123 4567",
        "+234-803-123-4567",
        "+(234)8031234567",
        "+2341",
        "+999123456789",
        "+",
        "",
        "+2348031234567\n",
        "+\u0662\u0663\u0664\u0668\u0660\u0663\u0661\u0662\u0663\u0664\u0665\u0666\u0667",
    ],
)
def test_e164_refuses_everything_else(phone):
    with pytest.raises(ValueError, match=r"E\.164"):
        fields.e164(phone)


@pytest.mark.parametrize("address", ["a@example.com", "first.last+tag@sub.example.co.uk"])
def test_email_accepts_addresses(address):
    assert fields.email(address) == address


@pytest.mark.parametrize(
    "address",
    ["plain", "a@b", "a@.com", "a b@example.com", "a@exa mple.com", "x" * 250 + "@e.co"],
)
def test_email_refuses_non_addresses(address):
    with pytest.raises(ValueError):
        fields.email(address)


@pytest.mark.parametrize("char", ["\x00", "\x07", "\t", "\n", "\r", "\x1f", "\x7f"])
def test_plain_text_refuses_control_characters(char):
    with pytest.raises(ValueError, match="Control characters"):
        fields.plain_text(f"a{char}b")


def test_plain_text_keeps_unicode():
    assert fields.plain_text("Chiamaka Ọ̀ṣun, Lagos") == "Chiamaka Ọ̀ṣun, Lagos"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01-31T09:30:00Z", datetime(2026, 1, 31, 9, 30, tzinfo=UTC)),
        ("2026-01-31T09:30:00+00:00", datetime(2026, 1, 31, 9, 30, tzinfo=UTC)),
        ("2026-01-31T09:30:00.250Z", datetime(2026, 1, 31, 9, 30, 0, 250000, tzinfo=UTC)),
    ],
)
def test_utc_timestamps_parse(text, expected):
    assert fields.utc_timestamp(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("2026-01-31T09:30:00+01:00", "UTC"),
        ("2026-01-31T09:30:00-00:30", "UTC"),
        ("2026-01-31T09:30:00", "UTC"),
        ("2026-01-31", "UTC"),
        ("31/01/2026", "ISO 8601"),
        ("", "ISO 8601"),
        ("2026-01-31T09:30:00Z" + " " * 30, "ISO 8601"),
    ],
)
def test_non_utc_or_garbled_timestamps_are_refused(text, message):
    with pytest.raises(ValueError, match=message):
        fields.utc_timestamp(text)


def test_future_timestamps_are_refused_beyond_five_minutes_of_skew():
    soon = datetime.now(UTC) + timedelta(minutes=2)
    later = datetime.now(UTC) + timedelta(minutes=10)
    assert fields.utc_timestamp(soon.isoformat()) == soon
    with pytest.raises(ValueError, match="future"):
        fields.utc_timestamp(later.isoformat())
    assert fields.utc_timestamp_any(later.isoformat()) == later


def test_metadata_limits_are_inclusive():
    at_limits = {
        **{f"k{i}": i for i in range(48)},
        "nested": {"a": {"b": "c"}},
        "s": "x" * 500,
    }
    assert fields.metadata(at_limits) == at_limits


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"a": {"b": {"c": {}}}}, "nest"),
        ({"a": [[{"b": 1}]]}, "nest"),  # a list counts as a level
        ({f"k{i}": 1 for i in range(51)}, "50 keys"),
        ({"a": {f"k{i}": 1 for i in range(51)}}, "50 keys"),
        ({"k" * 41: 1}, "1 to 40"),
        ({"s": "x" * 501}, "500 characters"),
        ({"a": ["x" * 501]}, "500 characters"),
        ({f"k{i}": "x" * 450 for i in range(10)}, "4096 bytes"),
        ({"ICD10": "M54.5"}, "health data"),
        ({"tags": {"symptoms": "pain"}}, "health data"),
    ],
)
def test_metadata_refusals(value, message):
    with pytest.raises(ValueError, match=message):
        fields.metadata(value)


def test_error_at_names_the_field():
    error = fields.error_at("patient.email", "Required.")
    assert error.context == {"field_path": "patient.email"}
    assert error.message() == "Required."


def example_numbers() -> list[phonenumbers.PhoneNumber]:
    numbers = []
    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        example = phonenumbers.example_number(region)
        if example is not None:
            numbers.append(example)
    return numbers


def test_every_regions_example_number_is_accepted_in_e164_only():
    numbers = example_numbers()
    assert len(numbers) > 200
    for number in numbers:
        e164 = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
        assert fields.e164(e164) == e164
        for other in (
            phonenumbers.PhoneNumberFormat.INTERNATIONAL,
            phonenumbers.PhoneNumberFormat.NATIONAL,
        ):
            text = phonenumbers.format_number(number, other)
            if text != e164:
                with pytest.raises(ValueError):
                    fields.e164(text)


@pytest.mark.parametrize("value", ["2000-01-01T00:00:00Z", "2099-12-31T23:59:59Z"])
def test_timestamps_at_the_ends_of_the_accepted_years_pass(value):
    assert fields.utc_timestamp_any(value).tzinfo is UTC


@pytest.mark.parametrize(
    "value", ["1999-12-31T23:59:59Z", "2100-01-01T00:00:00Z", "9999-12-31T23:59:59Z"]
)
def test_timestamps_outside_the_accepted_years_are_refused(value):
    with pytest.raises(ValueError, match="2000 to 2099"):
        fields.utc_timestamp_any(value)


def test_calendar_dates_are_bounded_and_checked():
    assert fields.calendar_date("2099-12-31").year == 2099
    with pytest.raises(ValueError, match="2000 to 2099"):
        fields.calendar_date("9999-12-31")
    for bad in ("2026-02-30", "2026-1-31", "tomorrow", "2026-01-31T00:00"):
        with pytest.raises(ValueError, match="Use a date"):
            fields.calendar_date(bad)


def test_bookings_reach_at_most_the_horizon():
    now = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
    assert fields.bookable(now + fields.BOOKING_HORIZON, now=now)
    with pytest.raises(ValueError, match="two years"):
        fields.bookable(now + fields.BOOKING_HORIZON + timedelta(seconds=1), now=now)


@pytest.mark.parametrize("char", ["\u202e", "\u2066", "\u200b", "\u200d", "\ufeff", "\u00ad"])
def test_plain_text_refuses_format_characters(char):
    with pytest.raises(ValueError, match="Invisible"):
        fields.plain_text(f"Ama{char}ka")


def test_plain_text_keeps_combining_marks_and_other_scripts():
    for text in ("Adéọlá", "Ìbàdàn", "Ngozi Ọkọnkwọ", "أحمد", "Chukwuemeka 🙂"):
        assert fields.plain_text(text) == text
