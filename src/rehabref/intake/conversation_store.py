"""Where each referral's assistant conversation stands (``intake_conversations``).

One row per referral: the dialogue's state (``intake.dialogue.State``), its channel, the
patient's address as a reference (its blind index), and the silence clock (``nudge_at``:
when the patient's silence next needs an action). Inbound messages find their conversation
by the sender's references (one per key of the ring): the newest open live conversation
with that number. The state is sealed here when written and opened when read
(``intake.sealing``): callers see its plain JSON.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import RowMapping, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.intake.sealing import opened_state, sealed_state
from rehabref.tables.intake import IntakeConversation

_conversations = table(IntakeConversation)


def _opened(ring: KeyRing, row: RowMapping | None) -> dict[str, Any] | None:
    return None if row is None else {**row, "state": opened_state(ring, row["state"])}


async def for_recipient(
    conn: AsyncConnection, ring: KeyRing, recipient_refs: list[str], *, open_only: bool
) -> dict[str, Any] | None:
    """The newest live conversation with this number (any of its references): an open one
    (a reply belongs there), or with ``open_only`` False any (a message after the intake
    still belongs to that referral)."""
    c = _conversations
    query = select(c).where(c.c.recipient_ref.in_(recipient_refs), c.c.environment == "live")
    if open_only:
        query = query.where(c.c.closed_at.is_(None))
    found = await conn.execute(query.order_by(c.c.updated_at.desc()).limit(1))
    return _opened(ring, found.mappings().first())


async def for_referral(
    conn: AsyncConnection, ring: KeyRing, referral_id: str, *, lock: bool = True
) -> dict[str, Any] | None:
    """The referral's conversation, locked on PostgreSQL unless ``lock`` is False (lock the
    referral first: the order every writer keeps)."""
    query = select(_conversations).where(_conversations.c.referral_id == referral_id)
    if lock and conn.dialect.name == "postgresql":
        query = query.with_for_update()
    return _opened(ring, (await conn.execute(query)).mappings().first())


def conversation_row(ring: KeyRing, values: dict[str, Any]) -> dict[str, Any]:
    """A new conversation row as it is stored (its state sealed)."""
    return {**values, "state": sealed_state(ring, values["state"])}


async def start(
    conn: AsyncConnection,
    ring: KeyRing,
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
        conversation_row(
            ring,
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
        ),
    )


async def save_turn(
    conn: AsyncConnection,
    ring: KeyRing,
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
        "state": sealed_state(ring, state),
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
