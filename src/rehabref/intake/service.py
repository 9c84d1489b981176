"""A patient's intake: the assistant session link, its token, and the patient's answers.

Moving the referral when the patient opens the link or answers is the intake workflow's
(``workflows/intake.py``); this module only keeps the assistant session.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Row, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.db import table
from rehabref.errors import ApiError
from rehabref.fastsql import Connection, Statement, execute
from rehabref.ids import new_id
from rehabref.instance_secret import SecretBox
from rehabref.tables.intake import AssistantSession
from rehabref.tables.referrals import Referral

_sessions = table(AssistantSession)
_referrals = table(Referral)
_INSERT_SESSION = Statement(insert(_sessions))

AVAILABILITY_SLOTS: tuple[str, ...] = (
    "weekday_mornings",
    "weekday_afternoons",
    "weekday_evenings",
    "weekends",
)
INTAKE_CARE_MODES: tuple[str, ...] = ("home_visit", "in_clinic", "remote")
# What the patient may choose, given the referral's care_mode (V1 vocabulary).
CARE_MODES_FOR: dict[str | None, tuple[str, ...]] = {
    "remote": ("remote",),
    "face_to_face": ("home_visit", "in_clinic"),
    "either": INTAKE_CARE_MODES,
    None: INTAKE_CARE_MODES,
}


def assistant_token(box: SecretBox, *, session_id: str, expires_at: datetime) -> str:
    """``<session id>.<expiry epoch s>.<signature>``: checkable without a database read."""
    body = f"{session_id}.{int(expires_at.timestamp())}"
    return f"{body}.{box.sign('assistant:' + body)}"


def read_assistant_token(box: SecretBox, token: str) -> tuple[str, bool] | None:
    """The session id and whether the token is still fresh; None when forged or garbled."""
    parts = token.split(".")
    if len(parts) != 3 or not (parts[1].isascii() and parts[1].isdigit()):
        return None
    session_id, expiry, signature = parts
    if not box.verify(f"assistant:{session_id}.{expiry}", signature):
        return None
    return session_id, int(expiry) > time.time()


def assistant_session(
    *, box: SecretBox, referral_id: str, now: datetime, ttl_seconds: int, base_url: str
) -> tuple[dict[str, Any], str]:
    """A new session row and the patient's URL for it (never log the URL)."""
    session_id = new_id("ast")
    expires_at = now + timedelta(seconds=ttl_seconds)
    row = {
        "id": session_id,
        "referral_id": referral_id,
        "expires_at": expires_at,
        "opened_at": None,
        "completed_at": None,
        "created_at": now,
    }
    token = assistant_token(box, session_id=session_id, expires_at=expires_at)
    return row, f"{base_url}/a/{token}"


async def open_assistant_session(
    conn: Connection,
    *,
    box: SecretBox,
    referral_id: str,
    now: datetime,
    ttl_seconds: int,
    base_url: str,
) -> str:
    """Create the session row and return the patient's URL (never log it)."""
    row, url = assistant_session(
        box=box, referral_id=referral_id, now=now, ttl_seconds=ttl_seconds, base_url=base_url
    )
    await execute(conn, _INSERT_SESSION, row)
    return url


def form_token(box: SecretBox, session_id: str) -> str:
    """The per-session CSRF token of the intake form (a signature only the server can make)."""
    return box.sign(f"intake-form:{session_id}")


async def session_with_referral(conn: AsyncConnection, session_id: str) -> Row[Any] | None:
    referrals = _referrals
    query: Any = (
        select(
            _sessions.c.id,
            _sessions.c.referral_id,
            _sessions.c.expires_at,
            _sessions.c.opened_at,
            _sessions.c.completed_at,
            referrals.c.status,
            referrals.c.care_mode,
            referrals.c.patient_first_name,
            referrals.c.patient_city,
            referrals.c.patient_area,
        )
        .join(referrals, referrals.c.id == _sessions.c.referral_id)
        .where(_sessions.c.id == session_id)
    )
    row: Row[Any] | None = (await conn.execute(query)).first()
    return row


async def mark_opened(conn: AsyncConnection, *, session_id: str, now: datetime) -> str | None:
    """Record the first open of the patient's link; the referral id, or None when the
    session is unknown or was opened before."""
    session = (
        await conn.execute(
            select(_sessions.c.referral_id, _sessions.c.opened_at)
            .where(_sessions.c.id == session_id)
            .with_for_update()
        )
    ).first()
    if session is None or session.opened_at is not None:
        return None
    await conn.execute(update(_sessions).where(_sessions.c.id == session_id).values(opened_at=now))
    return str(session.referral_id)


async def record_answers(
    conn: AsyncConnection,
    *,
    referral_id: str,
    session_id: str | None,
    availability: str,
    care_mode: str,
    area: str | None,
    now: datetime,
) -> None:
    """Store the patient's answers on their (latest, or given) assistant session.

    Raises ApiError 409 when that session was completed already.
    """
    query = select(_sessions.c.id, _sessions.c.completed_at).where(
        _sessions.c.referral_id == referral_id
    )
    if session_id is not None:
        query = query.where(_sessions.c.id == session_id)
    session = (
        await conn.execute(query.order_by(_sessions.c.created_at.desc()).with_for_update())
    ).first()
    if session is None or session.completed_at is not None:
        raise ApiError(409, "invalid_transition", "This intake was completed already.")
    await conn.execute(
        update(_sessions)
        .where(_sessions.c.id == session.id)
        .values(
            opened_at=func.coalesce(_sessions.c.opened_at, now),
            completed_at=now,
            availability=availability,
            care_mode=care_mode,
            area=area,
        )
    )
    if area:
        await conn.execute(
            update(_referrals)
            .where(_referrals.c.id == referral_id)
            .values(patient_area=area, updated_at=now)
        )
