"""A physiotherapist's visits as RFC 5545 iCalendar text: a pure function of the rows.

Rules followed: CRLF line endings; content lines folded at 75 octets (never inside a UTF-8
sequence) with a space starting each continuation; TEXT values escaped (backslash,
semicolon, comma, newline); times in UTC (``Z``); one ``UID`` per appointment, stable across
fetches, so calendars update an event instead of duplicating it. A cancelled or moved visit
stays in the feed as ``STATUS:CANCELLED`` with a higher ``SEQUENCE`` so clients remove it.

Threat: the feed ends up in third-party calendar clouds, so an event says who (first name),
how (care mode) and where (area): no surname, phone, diagnosis or partner.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from rehabref.clock import as_utc

MODES = {"face_to_face": "in person", "remote": "video session"}
CANCELLED = frozenset({"cancelled", "rescheduled"})


def stamp(when: datetime) -> str:
    return as_utc(when).strftime("%Y%m%dT%H%M%SZ")


def escape(value: str) -> str:
    """RFC 5545 TEXT: backslash, semicolon, comma and newlines escaped."""
    return (
        value.replace("\\", "\\\\")
        .replace(";", "\\;")
        .replace(",", "\\,")
        .replace("\r\n", "\\n")
        .replace("\r", "\\n")
        .replace("\n", "\\n")
    )


def fold(line: str) -> str:
    """Lines longer than 75 octets continue on the next line after a space."""
    data = line.encode()
    if len(data) <= 75:
        return line
    parts, start = [], 0
    while start < len(data):
        end = min(start + (75 if start == 0 else 74), len(data))
        while end < len(data) and (data[end] & 0xC0) == 0x80:  # not inside a UTF-8 sequence
            end -= 1
        parts.append(data[start:end].decode())
        start = end
    return "\r\n ".join(parts)


def _event(visit: Any, *, host: str, now: datetime) -> list[str]:
    mode = MODES.get(visit.care_mode, visit.care_mode)
    area = visit.patient_area or visit.patient_city or ""
    cancelled = visit.status in CANCELLED
    return [
        "BEGIN:VEVENT",
        f"UID:{visit.id}@{host}",
        f"DTSTAMP:{stamp(now)}",  # with a METHOD: when this copy was made
        f"LAST-MODIFIED:{stamp(visit.updated_at)}",
        f"SEQUENCE:{1 if cancelled else 0}",
        f"DTSTART:{stamp(visit.starts_at)}",
        f"DTEND:{stamp(visit.ends_at)}",
        f"SUMMARY:{escape(f'{visit.patient_first_name} ({mode})')}",
        f"DESCRIPTION:{escape(f'Physiotherapy visit, {mode}.')}",
        f"LOCATION:{escape(area)}",
        f"STATUS:{'CANCELLED' if cancelled else 'CONFIRMED'}",
        "TRANSP:OPAQUE",
        "END:VEVENT",
    ]


def render(visits: Iterable[Any], *, name: str, host: str, now: datetime) -> str:
    lines = [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        "PRODID:-//rehabref//physiotherapist visits//EN",
        "CALSCALE:GREGORIAN",
        "METHOD:PUBLISH",
        f"X-WR-CALNAME:{escape(f'rehabref visits ({name})')}",
        "X-WR-TIMEZONE:Africa/Lagos",
    ]
    for visit in visits:
        lines += _event(visit, host=host, now=now)
    lines.append("END:VCALENDAR")
    return "".join(fold(line) + "\r\n" for line in lines)
