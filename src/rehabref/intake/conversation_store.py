"""Where each referral's assistant conversation stands (``intake_conversations``).

One row per referral: the dialogue's state (``intake.dialogue.State``), its channel, the
patient's address as a reference, and the silence clock (``nudge_at``: when the patient's
silence next needs an action). Inbound messages find their conversation by the sender's
reference: the newest open live conversation with that number.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import RowMapping, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.db import table
from rehabref.tables.intake import IntakeConversation

_conversations = table(IntakeConversation)


async def for_recipient(
    conn: AsyncConnection, recipient_ref: str, *, open_only: bool
) -> RowMapping | None:
    """The newest live conversation with this number: an open one (a reply belongs there),
    or with ``open_only`` False any (a message after the intake still belongs to that
    referral)."""
    c = _conversations
    query = select(c).where(c.c.recipient_ref == recipient_ref, c.c.environment == "live")
    if open_only:
        query = query.where(c.c.closed_at.is_(None))
    return (await conn.execute(query.order_by(c.c.updated_at.desc()).limit(1))).mappings().first()


async def for_referral(
    conn: AsyncConnection, referral_id: str, *, lock: bool = True
) -> RowMapping | None:
    """The referral's conversation, locked on PostgreSQL unless ``lock`` is False (lock the
    referral first: the order every writer keeps)."""
    query = select(_conversations).where(_conversations.c.referral_id == referral_id)
    if lock and conn.dialect.name == "postgresql":
        query = query.with_for_update()
    return (await conn.execute(query)).mappings().first()


async def start(
    conn: AsyncConnection,
    *,
    referral_id: str,
    environment: str,
    channel: str,
    recipient_ref: str,
    state: dict[str, Any],
    now: datetime,
) -> None:
    """A conversation begun without a first message (the patient came by the web link)."""
    await conn.execute(
        insert(_conversations),
        {
            "referral_id": referral_id,
            "environment": environment,
            "channel": channel,
            "recipient_ref": recipient_ref,
            "state": state,
            "nudge_at": None,
            "created_at": now,
            "updated_at": now,
        },
    )


async def save_turn(
    conn: AsyncConnection,
    *,
    referral_id: str,
    state: dict[str, Any],
    engaged: bool,
    closed: bool,
    nudge_at: datetime | None,
    now: datetime,
) -> None:
    """The patient answered: the new state, and the silence clock starts again."""
    values: dict[str, Any] = {
        "state": state,
        "last_inbound_at": now,
        "reminded_at": None,
        "nudge_at": None if closed else nudge_at,
        "updated_at": now,
    }
    if engaged:
        values["engaged_at"] = now
    if closed:
        values["closed_at"] = now
    await conn.execute(
        update(_conversations).where(_conversations.c.referral_id == referral_id).values(**values)
    )


async def due_for_nudge(conn: AsyncConnection, *, now: datetime, limit: int) -> list[str]:
    """Referrals whose patient's silence needs an action now (read, not locked: the caller
    locks each referral, then its conversation, and checks again)."""
    c = _conversations
    query = (
        select(c.c.referral_id)
        .where(c.c.nudge_at <= now, c.c.closed_at.is_(None))
        .order_by(c.c.nudge_at)
        .limit(limit)
    )
    return [str(referral_id) for referral_id in (await conn.execute(query)).scalars()]


async def nudged(
    conn: AsyncConnection, *, referral_id: str, next_nudge: datetime | None, now: datetime
) -> None:
    """A reminder went out (``next_nudge`` is the hand-over time), or the conversation was
    handed over (``next_nudge`` None: closed)."""
    values: dict[str, Any] = {"nudge_at": next_nudge, "updated_at": now}
    if next_nudge is None:
        values["closed_at"] = now
    else:
        values["reminded_at"] = now
    await conn.execute(
        update(_conversations).where(_conversations.c.referral_id == referral_id).values(**values)
    )


async def close(conn: AsyncConnection, *, referral_id: str, now: datetime) -> None:
    await conn.execute(
        update(_conversations)
        .where(_conversations.c.referral_id == referral_id, _conversations.c.closed_at.is_(None))
        .values(closed_at=now, nudge_at=None, updated_at=now)
    )
