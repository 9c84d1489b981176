"""Current time in UTC, and the timestamp formats of the interface."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import overload

import msgspec


def utcnow() -> datetime:
    return datetime.now(UTC)


@overload
def iso(value: datetime) -> str: ...
@overload
def iso(value: None) -> None: ...
@overload
def iso(value: datetime | None) -> str | None: ...
def iso(value: datetime | None) -> str | None:
    """ISO 8601 UTC with a Z suffix and millisecond precision (truncated, not rounded)."""
    if value is None:
        return None
    # msgspec writes RFC 3339 in C ('"YYYY-MM-DDTHH:MM:SS[.ffffff]Z"', the fraction only when
    # there are microseconds) in a tenth of isoformat's time; a list of referrals formats
    # three timestamps per row.
    text = msgspec.json.encode(as_utc(value))
    if len(text) == _WHOLE_SECONDS:
        return text[1:20].decode() + ".000Z"
    return text[1:24].decode() + "Z"


_WHOLE_SECONDS = len(b'"2026-01-01T00:00:00Z"')


def as_utc(value: datetime) -> datetime:
    """Databases may hand back naive datetimes (SQLite); they are stored in UTC."""
    if value.tzinfo is UTC:
        return value
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def epoch_ms(value: datetime) -> int:
    return int(as_utc(value).timestamp() * 1000)
