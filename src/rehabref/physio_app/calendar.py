"""A physiotherapist's visits as an iCalendar feed (RFC 5545) at a secret URL.

Threat: the feed is fetched by calendar services with no cookie, so the URL is the only
credential. It carries 256 random bits; only its SHA-256 digest is stored; the physiotherapist
can replace it (the old URL stops working) or turn it off in the app. The access log records
the route template (``/cal/{token}``), never the token. Events hold what a diary needs (the
patient's first name, area, care mode), no surname, phone or diagnosis, because calendars are
synced to third-party clouds.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.clock import as_utc
from rehabref.db import table
from rehabref.physio_app.auth import digest
from rehabref.tables.physio_app import CalendarFeed
from rehabref.tables.referrals import Referral
from rehabref.tables.scheduling import Appointment

_feeds = table(CalendarFeed)
_appointments = table(Appointment)
_referrals = table(Referral)
PAST = timedelta(days=30)
AHEAD = timedelta(days=120)
MODES = {"face_to_face": "in person", "remote": "video session"}


async def new_feed(conn: AsyncConnection, *, physio_id: str, now: datetime) -> str:
    """Revoke the physiotherapist's feeds and open a new one; its secret."""
    await revoke(conn, physio_id=physio_id, now=now)
    secret = secrets.token_urlsafe(32)
    await conn.execute(
        insert(_feeds), {"digest": digest(secret), "physio_id": physio_id, "created_at": now}
    )
    return secret


async def revoke(conn: AsyncConnection, *, physio_id: str, now: datetime) -> None:
    await conn.execute(
        update(_feeds)
        .where(_feeds.c.physio_id == physio_id, _feeds.c.revoked_at.is_(None))
        .values(revoked_at=now)
    )


async def has_feed(conn: AsyncConnection, physio_id: str) -> bool:
    found = await conn.execute(
        select(_feeds.c.digest).where(
            _feeds.c.physio_id == physio_id, _feeds.c.revoked_at.is_(None)
        )
    )
    return found.first() is not None


async def feed_owner(conn: AsyncConnection, secret: str) -> str | None:
    if not secret or len(secret) > 100:
        return None
    found = await conn.execute(
        select(_feeds.c.physio_id).where(
            _feeds.c.digest == digest(secret), _feeds.c.revoked_at.is_(None)
        )
    )
    physio_id = found.scalar_one_or_none()
    return None if physio_id is None else str(physio_id)


async def visits_for_feed(conn: AsyncConnection, *, physio_id: str, now: datetime) -> list[Any]:
    query = (
        select(
            _appointments.c.id,
            _appointments.c.starts_at,
            _appointments.c.ends_at,
            _appointments.c.care_mode,
            _appointments.c.status,
            _appointments.c.updated_at,
            _referrals.c.patient_first_name,
            _referrals.c.patient_area,
            _referrals.c.patient_city,
        )
        .join(_referrals, _referrals.c.id == _appointments.c.referral_id)
        .where(
            _appointments.c.physio_id == physio_id,
            _appointments.c.status.in_(("booked", "attended")),
            _appointments.c.starts_at >= now - PAST,
            _appointments.c.starts_at < now + AHEAD,
            _referrals.c.erased_at.is_(None),
        )
        .order_by(_appointments.c.starts_at)
    )
    return list((await conn.execute(query)).all())


def _stamp(when: datetime) -> str:
    return as_utc(when).strftime("%Y%m%dT%H%M%SZ")


def escape(value: str) -> str:
    """RFC 5545 TEXT: backslash, semicolon, comma and newlines escaped."""
    return (
        value.replace("\\", "\\\\")
        .replace(";", "\\;")
        .replace(",", "\\,")
        .replace("\r\n", "\\n")
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


def render(visits: list[Any], *, name: str, now: datetime, host: str) -> str:
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
        area = visit.patient_area or visit.patient_city
        mode = MODES.get(visit.care_mode, visit.care_mode)
        lines += [
            "BEGIN:VEVENT",
            f"UID:{visit.id}@{host}",
            f"DTSTAMP:{_stamp(now)}",
            f"LAST-MODIFIED:{_stamp(visit.updated_at)}",
            f"DTSTART:{_stamp(visit.starts_at)}",
            f"DTEND:{_stamp(visit.ends_at)}",
            f"SUMMARY:{escape(f'Visit: {visit.patient_first_name} ({area})')}",
            f"DESCRIPTION:{escape(f'Physiotherapy visit, {mode}.')}",
            f"LOCATION:{escape(area)}",
            "STATUS:CONFIRMED",
            "END:VEVENT",
        ]
    lines.append("END:VCALENDAR")
    return "".join(fold(line) + "\r\n" for line in lines)
