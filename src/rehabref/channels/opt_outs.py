"""STOP and START: a patient's messaging consent, per number, across every referral.

A whole message that is one of the usual opt-out words (the carriers' and Twilio's list)
stops every automated message to that number until it sends an opt-in word. The change is
kept with its time and channel; a repeated STOP changes nothing (so it is acknowledged once).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.channels.outbox import WAITING
from rehabref.db import insert_ignoring_duplicates, table
from rehabref.tables.channels import MessageOptOut, OutboundMessage

_opt_outs = table(MessageOptOut)
_messages = table(OutboundMessage)

STOP_WORDS = frozenset({"stop", "stopall", "stop all", "unsubscribe", "cancel", "end", "quit"})
START_WORDS = frozenset({"start", "unstop", "resume"})


def keyword(text: str | None) -> str | None:
    """``"stop"`` or ``"start"`` when the whole message is one of their words, else None."""
    if not text:
        return None
    word = " ".join(text.strip().strip(".!").lower().split())
    if word in STOP_WORDS:
        return "stop"
    if word in START_WORDS:
        return "start"
    return None


async def is_opted_out(conn: AsyncConnection, recipient_ref: str) -> bool:
    row = (
        await conn.execute(
            select(_opt_outs.c.opted_out).where(_opt_outs.c.recipient_ref == recipient_ref)
        )
    ).first()
    return bool(row is not None and row.opted_out)


async def opt_out(
    conn: AsyncConnection, *, recipient_ref: str, channel: str, now: datetime
) -> bool:
    """Record a STOP; True when the number was not opted out before. Messages still owed to
    it are suppressed now, not at their turn."""
    if await is_opted_out(conn, recipient_ref):
        return False
    inserted = await insert_ignoring_duplicates(
        conn,
        _opt_outs,
        {
            "recipient_ref": recipient_ref,
            "opted_out": True,
            "channel": channel,
            "opted_out_at": now,
            "opted_in_at": None,
        },
    )
    if not inserted:
        await conn.execute(
            update(_opt_outs)
            .where(_opt_outs.c.recipient_ref == recipient_ref)
            .values(opted_out=True, channel=channel, opted_out_at=now, opted_in_at=None)
        )
    await conn.execute(
        update(_messages)
        .where(_messages.c.recipient_ref == recipient_ref, _messages.c.state.in_(WAITING[:1]))
        .values(state="suppressed", last_error="the recipient opted out (STOP)", updated_at=now)
    )
    return True


async def opt_in(conn: AsyncConnection, *, recipient_ref: str, channel: str, now: datetime) -> bool:
    """Record a START; True when the number was opted out."""
    result = await conn.execute(
        update(_opt_outs)
        .where(_opt_outs.c.recipient_ref == recipient_ref, _opt_outs.c.opted_out.is_(True))
        .values(opted_out=False, channel=channel, opted_in_at=now)
    )
    return bool(result.rowcount)
