"""A physiotherapist's secret calendar feed URL: made, replaced, revoked, resolved, and the
visits it carries.

Threat: the feed is fetched by calendar services with no cookie, so the URL is the only
credential. It carries 256 random bits; only its SHA-256 digest is stored (a copy of the
database opens no feed); a new one revokes the old; a revoked or unknown one is a 404. The
edges keep it out of the logs (route templates in the access log, ``/calendar/`` redacted in
messages). The visits read here carry the patient's first name and area only, no surname,
phone or diagnosis, because calendars are synced to third-party clouds. Services never commit.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.db import table
from rehabref.tables.physio_app import CalendarFeed
from rehabref.tables.referrals import Referral
from rehabref.tables.scheduling import Appointment

_feeds = table(CalendarFeed)
_appointments = table(Appointment)
_referrals = table(Referral)
PAST = timedelta(days=30)
AHEAD = timedelta(days=120)
FEED_STATUSES = ("booked", "attended", "cancelled", "rescheduled")
TOKEN_BYTES = 32  # 256 bits
MAX_TOKEN_LENGTH = 100


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def feed_path(token: str) -> str:
    return f"/calendar/{token}.ics"


async def new_feed(conn: AsyncConnection, *, physio_id: str, now: datetime) -> str:
    """Revoke the physiotherapist's feeds and open a new one; its token (shown once)."""
    await revoke(conn, physio_id=physio_id, now=now)
    token = secrets.token_urlsafe(TOKEN_BYTES)
    await conn.execute(
        insert(_feeds), {"digest": digest(token), "physio_id": physio_id, "created_at": now}
    )
    return token


async def revoke(conn: AsyncConnection, *, physio_id: str, now: datetime) -> bool:
    """End the physiotherapist's feed; whether there was one."""
    result = await conn.execute(
        update(_feeds)
        .where(_feeds.c.physio_id == physio_id, _feeds.c.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    return bool(result.rowcount)


async def has_feed(conn: AsyncConnection, physio_id: str) -> bool:
    found = await conn.execute(
        select(_feeds.c.digest).where(
            _feeds.c.physio_id == physio_id, _feeds.c.revoked_at.is_(None)
        )
    )
    return found.first() is not None


async def feed_owner(conn: AsyncConnection, token: str) -> str | None:
    """The physiotherapist whose live feed ``token`` opens, or None."""
    if not token or len(token) > MAX_TOKEN_LENGTH:
        return None
    found = await conn.execute(
        select(_feeds.c.physio_id).where(
            _feeds.c.digest == digest(token), _feeds.c.revoked_at.is_(None)
        )
    )
    physio_id = found.scalar_one_or_none()
    return None if physio_id is None else str(physio_id)


async def visits_for_feed(conn: AsyncConnection, *, physio_id: str, now: datetime) -> list[Any]:
    """The physiotherapist's appointments from 30 days ago to 120 days ahead, the cancelled
    and moved ones too (so calendars remove them), of referrals not erased."""
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
            _appointments.c.status.in_(FEED_STATUSES),
            _appointments.c.starts_at >= now - PAST,
            _appointments.c.starts_at < now + AHEAD,
            _referrals.c.erased_at.is_(None),
        )
        .order_by(_appointments.c.starts_at, _appointments.c.id)
    )
    return list((await conn.execute(query)).all())
