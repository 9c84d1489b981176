"""Patient messages as rows: written in the business transaction, sent later by the worker.

``message_row`` makes the row a plan writes (a create) and ``enqueue`` writes one inside an
open transaction (a dialogue turn, a booking). Nothing here talks to a provider: the message
worker (``channels/worker.py``) does, so a message is never lost to a crash between the
business write and the send, and is never sent for a transaction that rolled back.

Messages to one recipient go out in the order they were written (their ids are
time-ordered); the worker never sends a message while an earlier one to the same recipient
is still waiting.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.channels.content import Channel, Content
from rehabref.channels.sealing import sealed_message_columns
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.ids import new_id
from rehabref.tables.channels import OutboundMessage

_messages = table(OutboundMessage)

# Still owed to the patient: the worker will (try to) send these.
WAITING = ("pending", "sending")
# Sent even to a number that opted out: the one confirmation that it did.
OPT_OUT_ACK = "optout.ack"


def message_row(
    ring: KeyRing,
    *,
    channel: Channel,
    to: str,
    content: Content,
    purpose: str,
    environment: str,
    referral_id: str | None,
    now: datetime,
) -> dict[str, Any]:
    """A pending message, due now, for the caller to write in its transaction: the
    recipient and content sealed, the recipient's blind index as its reference."""
    return {
        "id": new_id("msg"),
        "referral_id": referral_id,
        "environment": environment,
        "channel": channel,
        **sealed_message_columns(ring, to, content),
        "purpose": purpose,
        "state": "pending",
        "attempts": 0,
        "next_attempt_at": now,
        "claimed_until": None,
        "provider": None,
        "provider_message_id": None,
        "last_error": None,
        "created_at": now,
        "updated_at": now,
        "sent_at": None,
        "status_at": None,
    }


async def enqueue(
    conn: AsyncConnection,
    ring: KeyRing,
    *,
    channel: Channel,
    to: str,
    content: Content,
    purpose: str,
    environment: str,
    referral_id: str | None,
    now: datetime,
) -> str:
    row = message_row(
        ring,
        channel=channel,
        to=to,
        content=content,
        purpose=purpose,
        environment=environment,
        referral_id=referral_id,
        now=now,
    )
    await conn.execute(insert(_messages), row)
    return str(row["id"])


async def referral_of_message(conn: AsyncConnection, provider_message_id: str) -> str | None:
    """The referral of the message a provider knows by this id (what a reply answers)."""
    found = await conn.execute(
        select(_messages.c.referral_id).where(
            _messages.c.provider_message_id == provider_message_id[:120]
        )
    )
    referral_id = found.scalar()
    return str(referral_id) if referral_id is not None else None


async def cancel_waiting(
    conn: AsyncConnection, *, referral_id: str, now: datetime, reason: str
) -> int:
    """Messages of a referral that no longer need sending (it was cancelled or closed)."""
    result = await conn.execute(
        update(_messages)
        .where(_messages.c.referral_id == referral_id, _messages.c.state == "pending")
        .values(state="cancelled", last_error=reason[:200], updated_at=now)
    )
    return int(result.rowcount or 0)
