"""A patient's intake: the assistant session link, its progress, or a human contact task.

``start_assistant`` and ``complete_intake`` move the referral through the state machine
(``referrals/transitions.py``, imported inside the functions: it imports this module).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Row, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.clock import iso, utcnow
from rehabref.db import table
from rehabref.errors import ApiError
from rehabref.events.outbox import NewEvent, record_events
from rehabref.events.payloads import referral_base
from rehabref.fastsql import Connection, Statement, execute
from rehabref.ids import new_id
from rehabref.instance_secret import SecretBox
from rehabref.tables.intake import AssistantSession, ContactTask

_sessions = table(AssistantSession)
_tasks = table(ContactTask)
_INSERT_SESSION = Statement(insert(_sessions))
_INSERT_TASK = Statement(insert(_tasks))

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
# Statuses from which opening the assistant moves the referral to assistant_started.
_STARTABLE = frozenset({"received", "contact_pending"})
_ENDED = frozenset({"closed", "cancelled"})


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
    session_id = new_id("ast")
    expires_at = now + timedelta(seconds=ttl_seconds)
    await execute(
        conn,
        _INSERT_SESSION,
        {
            "id": session_id,
            "referral_id": referral_id,
            "expires_at": expires_at,
            "opened_at": None,
            "completed_at": None,
            "created_at": now,
        },
    )
    token = assistant_token(box, session_id=session_id, expires_at=expires_at)
    return f"{base_url}/a/{token}"


async def open_contact_task(
    conn: Connection,
    *,
    referral_id: str,
    partner_id: str,
    environment: str,
    channel: str,
    purpose: str,
    now: datetime,
) -> str:
    task_id = new_id("task")
    await execute(
        conn,
        _INSERT_TASK,
        {
            "id": task_id,
            "referral_id": referral_id,
            "partner_id": partner_id,
            "environment": environment,
            "channel": channel,
            "purpose": purpose,
            "status": "open",
            "claimed_by": None,
            "created_at": now,
            "updated_at": now,
        },
    )
    return task_id


def form_token(box: SecretBox, session_id: str) -> str:
    """The per-session CSRF token of the intake form (a signature only the server can make)."""
    return box.sign(f"intake-form:{session_id}")


async def session_with_referral(conn: AsyncConnection, session_id: str) -> Row[Any] | None:
    from rehabref.tables.referrals import Referral

    referrals = table(Referral)
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


async def start_assistant(
    conn: AsyncConnection, *, session_id: str, actor: str, now: datetime | None = None
) -> bool:
    """First open of the patient's link: marks it opened and, when the referral is still
    waiting (received / contact_pending), moves it to assistant_started with its
    ``assistant.started`` event. Returns True when this call was the first open."""
    from rehabref.referrals.transitions import lock_referral, transition

    now = now or utcnow()
    session = (
        await conn.execute(
            select(_sessions.c.referral_id, _sessions.c.opened_at)
            .where(_sessions.c.id == session_id)
            .with_for_update()
        )
    ).first()
    if session is None or session.opened_at is not None:
        return False
    await conn.execute(update(_sessions).where(_sessions.c.id == session_id).values(opened_at=now))
    referral = await lock_referral(conn, session.referral_id)
    if referral is not None and referral.status in _STARTABLE:
        await transition(
            conn,
            referral_id=session.referral_id,
            to="assistant_started",
            actor=actor,
            reason="patient opened the assistant link",
            now=now,
        )
    return True


MatchFunction = Callable[..., Awaitable[str | None]]


def matcher() -> MatchFunction | None:
    """``matching.service.match_referral`` when the matching domain is installed."""
    try:
        module = importlib.import_module("rehabref.matching.service")
    except ImportError:
        return None
    found: MatchFunction | None = getattr(module, "match_referral", None)
    return found


async def complete_intake(
    conn: AsyncConnection,
    *,
    referral_id: str,
    availability: str,
    care_mode: str,
    area: str | None,
    actor: str,
    session_id: str | None = None,
    now: datetime | None = None,
) -> str | None:
    """Store the patient's answers, emit ``patient.intake_completed`` and run matching.

    Returns the matched physiotherapist id (None when nobody fits or matching is absent).
    Raises ApiError 409 when the session was completed already.
    """
    from rehabref.referrals.transitions import callback_targets, lock_referral, transition
    from rehabref.tables.referrals import Referral

    now = now or utcnow()
    referral = await lock_referral(conn, referral_id)
    if referral is None:
        raise ApiError(404, "not_found", "No referral with this identifier.")
    if referral.status in _ENDED:
        raise ApiError(409, "invalid_transition", f"The referral is {referral.status}.")
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
    if referral.status in _STARTABLE:
        # Answers without a recorded page open (e.g. a messaging reply): the assistant
        # flow has started all the same, so the state machine says so first.
        referral = await transition(
            conn,
            referral_id=referral_id,
            to="assistant_started",
            actor=actor,
            reason="patient answered the assistant",
            now=now,
        )
        # The intake event strictly after assistant.started, so ordering by time holds.
        now = max(utcnow(), now + timedelta(microseconds=1))
    referrals = table(Referral)
    if area:
        await conn.execute(
            update(referrals)
            .where(referrals.c.id == referral_id)
            .values(patient_area=area, updated_at=now)
        )
    data = referral_base(referral)
    data.update(intake_status="completed", completed_at=iso(now))
    await record_events(
        conn,
        partner_id=referral.partner_id,
        environment=referral.environment,
        events=[
            NewEvent(
                "patient.intake_completed",
                data,
                referral_id,
                extra_targets=callback_targets(referral),
                occurred_at=now,
            )
        ],
    )
    match = matcher()
    if match is None:
        return None
    return await match(conn, referral_id=referral_id, now=now)
