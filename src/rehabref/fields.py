"""Field rules shared by request schemas: E.164 phones, e-mail, UTC timestamps, metadata."""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Any

import msgspec
from pydantic import AfterValidator, StringConstraints
from pydantic_core import PydanticCustomError

from rehabref import e164 as e164_numbers

_EMAIL = re.compile(
    r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~\-]+@[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?)+$"
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

# Accepted years for every date and timestamp (docs/security.md).
EARLIEST_YEAR = 2000
LATEST_YEAR = 2099
DATE_RANGE_MESSAGE = f"Dates must fall in the years {EARLIEST_YEAR} to {LATEST_YEAR}."
BOOKING_HORIZON = timedelta(days=731)

METADATA_MAX_BYTES = 4096
METADATA_MAX_KEYS = 50
METADATA_MAX_DEPTH = 3
# Metadata is for campaign and internal tags; these keys suggest health data and are refused.
_HEALTH_KEYS = {
    "diagnosis",
    "clinical_notes",
    "notes",
    "symptoms",
    "condition",
    "medication",
    "medications",
    "treatment",
    "pain_score",
    "medical_history",
    "icd10",
    "icd_10",
}


def error_at(field_path: str, message: str) -> PydanticCustomError:
    """A model-level rule's error, reported at ``field_path`` (relative to the model)."""
    return PydanticCustomError("value_error", message, {"field_path": field_path})


def accepted(value: bool) -> bool:
    if value is not True:
        raise ValueError("The patient's consent must be accepted (accepted: true).")
    return value


# Phone numbers: exactly E.164, as libphonenumber validates them (rehabref.e164).
e164 = e164_numbers.check


def email(value: str) -> str:
    if len(value) > 254 or not _EMAIL.match(value):
        raise ValueError("Not a valid e-mail address.")
    return value


def plain_text(value: str) -> str:
    """Text a person reads (names, diagnoses, notes): no control characters, and no invisible
    formatting characters (Unicode category Cf: bidirectional overrides and isolates,
    zero-width characters, BOM), which can reorder or hide what a coordinator reads."""
    if _CONTROL.search(value):
        raise ValueError("Control characters are not allowed.")
    if not value.isascii() and any(unicodedata.category(char) == "Cf" for char in value):
        raise ValueError("Invisible or direction-changing characters are not allowed.")
    return value


def reference(value: str) -> str:
    """A partner's own identifier (external_ref, partner_reference)."""
    return plain_text(value)


Reference = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=255),
    AfterValidator(reference),
]


def utc_timestamp(value: str) -> datetime:
    """ISO 8601 with an explicit UTC offset (Z or +00:00), not in the future."""
    parsed = utc_timestamp_any(value)
    if parsed > datetime.now(UTC) + timedelta(minutes=5):
        raise ValueError("The timestamp is in the future.")
    return parsed


def utc_timestamp_any(value: str) -> datetime:
    """ISO 8601 with an explicit UTC offset (Z or +00:00)."""
    if len(value) > 40:
        raise ValueError("Use an ISO 8601 UTC timestamp, e.g. 2026-01-31T09:30:00Z.")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise ValueError("Use an ISO 8601 UTC timestamp, e.g. 2026-01-31T09:30:00Z.") from exc
    if parsed.tzinfo is None or parsed.utcoffset() != timedelta(0):
        raise ValueError("The timestamp must be in UTC (end it with Z).")
    return in_date_range(parsed.astimezone(UTC))


def in_date_range(value: datetime) -> datetime:
    """Dates outside the years 2000 to 2099 are typing mistakes or probes; refusing them also
    keeps date arithmetic (a day's end, a reminder's time) from overflowing."""
    if not EARLIEST_YEAR <= value.year <= LATEST_YEAR:
        raise ValueError(DATE_RANGE_MESSAGE)
    return value


def calendar_date(value: str) -> date:
    """``YYYY-MM-DD`` within the accepted years."""
    try:
        day = date.fromisoformat(value) if len(value) == 10 else None
    except ValueError:
        day = None
    if day is None:
        raise ValueError("Use a date like 2026-01-31.")
    if not EARLIEST_YEAR <= day.year <= LATEST_YEAR:
        raise ValueError(DATE_RANGE_MESSAGE)
    return day


def bookable(when: datetime, *, now: datetime) -> datetime:
    """An appointment or session time: at most ``BOOKING_HORIZON`` ahead of ``now``."""
    if when > now + BOOKING_HORIZON:
        raise ValueError("Appointments can be booked at most two years ahead.")
    return when


def utc_timestamp_text(value: str) -> str:
    utc_timestamp(value)
    return value


def metadata(value: dict[str, Any]) -> dict[str, Any]:
    _check_metadata(value, depth=1)
    if len(msgspec.json.encode(value)) > METADATA_MAX_BYTES:
        raise ValueError(f"Metadata is larger than {METADATA_MAX_BYTES} bytes as JSON.")
    return value


def _check_metadata(value: Any, *, depth: int) -> None:
    if isinstance(value, dict):
        if depth > METADATA_MAX_DEPTH:
            raise ValueError(f"Metadata may nest at most {METADATA_MAX_DEPTH} levels.")
        if len(value) > METADATA_MAX_KEYS:
            raise ValueError(f"Metadata objects may hold at most {METADATA_MAX_KEYS} keys.")
        for key, item in value.items():
            if not isinstance(key, str) or not 1 <= len(key) <= 40:
                raise ValueError("Metadata keys must be 1 to 40 characters.")
            if key.lower() in _HEALTH_KEYS:
                raise ValueError(f"Metadata must not hold patient health data ({key!r}).")
            _check_metadata(item, depth=depth + 1)
    elif isinstance(value, list):
        if depth > METADATA_MAX_DEPTH:
            raise ValueError(f"Metadata may nest at most {METADATA_MAX_DEPTH} levels.")
        for item in value:
            _check_metadata(item, depth=depth + 1)
    elif isinstance(value, str) and len(value) > 500:
        raise ValueError("Metadata strings may be at most 500 characters.")


Phone = Annotated[str, StringConstraints(max_length=20), AfterValidator(e164)]
Email = Annotated[str, StringConstraints(max_length=254), AfterValidator(email)]
UtcTimestamp = Annotated[str, StringConstraints(max_length=40), AfterValidator(utc_timestamp_text)]


def text(max_length: int, min_length: int = 1) -> Any:
    return Annotated[
        str,
        StringConstraints(strip_whitespace=True, min_length=min_length, max_length=max_length),
        AfterValidator(plain_text),
    ]
