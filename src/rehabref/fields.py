"""Field rules shared by request schemas: E.164 phones, e-mail, UTC timestamps, metadata."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

import msgspec
from pydantic import AfterValidator, StringConstraints
from pydantic_core import PydanticCustomError

from rehabref import e164 as e164_numbers

_EMAIL = re.compile(
    r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~\-]+@[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?)+$"
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

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
    if _CONTROL.search(value):
        raise ValueError("Control characters are not allowed.")
    return value


# Invisible characters (zero-width, bidirectional overrides, BOM): two references that look
# the same must be the same, and none may reorder what a coordinator reads.
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def reference(value: str) -> str:
    """A partner's own identifier (external_ref, partner_reference)."""
    plain_text(value)
    if _INVISIBLE.search(value):
        raise ValueError("Invisible or direction-changing characters are not allowed.")
    return value


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
    return parsed.astimezone(UTC)


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
