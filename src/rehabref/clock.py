"""Current time in UTC, and the timestamp formats of the interface."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    return datetime.now(UTC)


def iso(value: datetime | None) -> str | None:
    """ISO 8601 UTC with a Z suffix and millisecond precision."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    elif value.tzinfo is not UTC:
        value = value.astimezone(UTC)
    return value.isoformat(timespec="milliseconds")[:-6] + "Z"


def as_utc(value: datetime) -> datetime:
    """Databases may hand back naive datetimes (SQLite); they are stored in UTC."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def epoch_ms(value: datetime) -> int:
    return int(as_utc(value).timestamp() * 1000)
