"""Physiotherapist sign-in: a one-time link sent through the message outbox, then a session.

Threats: someone signing in as a physiotherapist (and seeing their patients), or a link or
cookie copied from a log or a database dump. The link carries 256 random bits, is valid for
``LINK_SECONDS`` and once; opening it shows a button, and only the POST consumes it (link
previews in WhatsApp fetch URLs). Sessions are a random cookie (HttpOnly, SameSite=Strict,
path /app) valid for ``SESSION_SECONDS``; sign-out ends this one, "sign out everywhere" every
session of the physiotherapist. Only SHA-256 digests are stored, and the access log records
route templates, never the path that holds the token. Asking for a link answers the same
whether or not the contact is registered, so the form does not reveal who is.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.channels.content import Channel, Reply, Template
from rehabref.channels.outbox import enqueue
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.tables.matching import Physiotherapist
from rehabref.tables.physio_app import PhysioAppSession, PhysioSignInLink

LINK_SECONDS = 15 * 60
SESSION_SECONDS = 12 * 3600
COOKIE = "rr_physio"
_physios = table(Physiotherapist)
_links = table(PhysioSignInLink)
_sessions = table(PhysioAppSession)


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True)
class SignedIn:
    physio_id: str
    name: str
    session_digest: str

    @property
    def actor(self) -> str:
        return f"physio:{self.physio_id}"


async def physio_by_contact(conn: AsyncConnection, contact: str) -> Any:
    """The active live-registry physiotherapist with this phone or e-mail, or None."""
    column = _physios.c.email if "@" in contact else _physios.c.phone
    return (
        await conn.execute(
            select(_physios).where(
                column == contact, _physios.c.environment == "live", _physios.c.active.is_(True)
            )
        )
    ).first()


def sign_in_message(channel: str, link: str) -> Reply | Template:
    text = f"Your rehabref sign-in link (valid 15 minutes, once): {link}"
    if channel == "whatsapp":
        return Template(
            name="rehabref_physio_sign_in", language="en", parameters=(link,), text=text
        )
    return Reply(text=text, subject="Sign in to rehabref")


async def send_link(
    conn: AsyncConnection,
    ring: KeyRing,
    *,
    physio: Any,
    channel: Channel,
    base_url: str,
    now: datetime,
) -> bool:
    """Write a new link and its message to the outbox; False when the channel has no address."""
    to = physio.email if channel == "email" else physio.phone
    if not to:
        return False
    secret = secrets.token_urlsafe(32)
    await conn.execute(
        insert(_links),
        {
            "digest": digest(secret),
            "physio_id": physio.id,
            "channel": channel,
            "created_at": now,
            "expires_at": now + timedelta(seconds=LINK_SECONDS),
        },
    )
    await enqueue(
        conn,
        ring,
        channel=channel,
        to=to,
        content=sign_in_message(channel, f"{base_url}/app/link/{secret}"),
        purpose="physio.sign_in",
        environment="live",
        referral_id=None,
        now=now,
    )
    return True


async def link_is_open(conn: AsyncConnection, secret: str, now: datetime) -> bool:
    row = (
        await conn.execute(
            select(_links.c.digest).where(
                _links.c.digest == digest(secret),
                _links.c.used_at.is_(None),
                _links.c.expires_at > now,
            )
        )
    ).first()
    return row is not None


async def use_link(conn: AsyncConnection, secret: str, now: datetime) -> str | None:
    """Consume the link (once) and open a session; the session cookie value, or None."""
    used = await conn.execute(
        update(_links)
        .where(
            _links.c.digest == digest(secret), _links.c.used_at.is_(None), _links.c.expires_at > now
        )
        .values(used_at=now)
        .returning(_links.c.physio_id)
    )
    physio_id = used.scalar_one_or_none()
    if physio_id is None:
        return None
    value = secrets.token_urlsafe(32)
    await conn.execute(
        insert(_sessions),
        {
            "digest": digest(value),
            "physio_id": physio_id,
            "created_at": now,
            "expires_at": now + timedelta(seconds=SESSION_SECONDS),
        },
    )
    return value


async def session_of(conn: AsyncConnection, value: str | None, now: datetime) -> SignedIn | None:
    if not value or len(value) > 100:
        return None
    row = (
        await conn.execute(
            select(_sessions.c.digest, _physios.c.id, _physios.c.name)
            .join(_physios, _physios.c.id == _sessions.c.physio_id)
            .where(
                _sessions.c.digest == digest(value),
                _sessions.c.ended_at.is_(None),
                _sessions.c.expires_at > now,
                _physios.c.active.is_(True),
            )
        )
    ).first()
    return None if row is None else SignedIn(row.id, row.name, row.digest)


async def physio_name(conn: AsyncConnection, physio_id: str) -> str:
    name = (
        await conn.execute(select(_physios.c.name).where(_physios.c.id == physio_id))
    ).scalar_one()
    return str(name)


async def sign_out(
    conn: AsyncConnection, who: SignedIn, now: datetime, *, everywhere: bool
) -> None:
    owner = (
        _sessions.c.physio_id == who.physio_id
        if everywhere
        else _sessions.c.digest == who.session_digest
    )
    await conn.execute(
        update(_sessions).where(owner, _sessions.c.ended_at.is_(None)).values(ended_at=now)
    )
