"""Starting a patient's intake: an assistant session link or a human contact task."""

from __future__ import annotations

import time
from datetime import datetime, timedelta

from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.db import table
from rehabref.ids import new_id
from rehabref.instance_secret import SecretBox
from rehabref.intake.models import AssistantSession, ContactTask

_sessions = table(AssistantSession)
_tasks = table(ContactTask)


def assistant_token(box: SecretBox, *, session_id: str, expires_at: datetime) -> str:
    """``<session id>.<expiry epoch s>.<signature>``: checkable without a database read."""
    body = f"{session_id}.{int(expires_at.timestamp())}"
    return f"{body}.{box.sign('assistant:' + body)}"


def read_assistant_token(box: SecretBox, token: str) -> tuple[str, bool] | None:
    """The session id and whether the token is still fresh; None when forged or garbled."""
    parts = token.split(".")
    if len(parts) != 3 or not parts[1].isdigit():
        return None
    session_id, expiry, signature = parts
    if not box.verify(f"assistant:{session_id}.{expiry}", signature):
        return None
    return session_id, int(expiry) > time.time()


async def open_assistant_session(
    conn: AsyncConnection,
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
    await conn.execute(
        insert(_sessions),
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
    conn: AsyncConnection,
    *,
    referral_id: str,
    partner_id: str,
    environment: str,
    channel: str,
    purpose: str,
    now: datetime,
) -> str:
    task_id = new_id("task")
    await conn.execute(
        insert(_tasks),
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
