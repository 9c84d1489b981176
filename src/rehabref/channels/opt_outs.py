"""STOP and START: a patient's messaging consent, per number, across every referral.

A whole message that is one of the usual opt-out words (the carriers' and Twilio's list)
stops every automated message to that number until it sends an opt-in word. Every change is
kept with its time and channel (``history``); a repeated STOP changes nothing (so it is
acknowledged once). A number is found by its blind index under every key of the ring
(``channels.sealing.opt_out_refs``): a STOP said before a key rotation still holds after it.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import RowMapping, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.channels.sealing import address_ref, address_refs, opt_out_refs
from rehabref.crypto import KeyRing
from rehabref.db import insert_ignoring_duplicates, table
from rehabref.tables.channels import MessageOptOut, OutboundMessage

_opt_outs = table(MessageOptOut)
_messages = table(OutboundMessage)

STOP_WORDS = frozenset({"stop", "stopall", "stop all", "unsubscribe", "quit"})
# Carriers treat these as STOP on SMS too; in a WhatsApp conversation "cancel" or "end" is
# more likely about the question than about every message, so there they are not.
SMS_ONLY_STOP_WORDS = frozenset({"cancel", "end"})
START_WORDS = frozenset({"start", "unstop", "resume"})


def keyword(text: str | None, *, channel: str) -> str | None:
    """``"stop"`` or ``"start"`` when the whole message is one of their words, else None."""
    if not text:
        return None
    word = " ".join(text.strip().strip(".!").lower().split())
    if word in STOP_WORDS or (channel == "sms" and word in SMS_ONLY_STOP_WORDS):
        return "stop"
    if word in START_WORDS:
        return "start"
    return None


def _history(
    previous: list[dict[str, str]] | None, action: str, channel: str, now: datetime
) -> list[dict[str, str]]:
    """Every STOP and START of the number, oldest first (consent withdrawals are kept)."""
    return [*(previous or []), {"action": action, "channel": channel, "at": now.isoformat()}]


async def is_opted_out(conn: AsyncConnection, ring: KeyRing, address: str) -> bool:
    found = await conn.execute(
        select(_opt_outs.c.opted_out).where(
            _opt_outs.c.recipient_ref.in_(opt_out_refs(ring, address)),
            _opt_outs.c.opted_out.is_(True),
        )
    )
    return found.first() is not None


async def opt_out(
    conn: AsyncConnection, ring: KeyRing, *, address: str, channel: str, now: datetime
) -> bool:
    """Record a STOP; True when the number was not opted out before. Messages still owed to
    it are suppressed now, not at their turn."""
    current = await _current(conn, ring, address)
    if current is not None and current["opted_out"]:
        return False
    inserted = current is None and await insert_ignoring_duplicates(
        conn,
        _opt_outs,
        {
            "recipient_ref": address_ref(ring, address),
            "opted_out": True,
            "channel": channel,
            "opted_out_at": now,
            "opted_in_at": None,
            "history": _history(None, "stop", channel, now),
        },
    )
    if not inserted:
        # The number's row, under whichever reference it was written (or, when a STOP raced
        # us to the insert, under the current one).
        ref = current["recipient_ref"] if current is not None else address_ref(ring, address)
        previous = current["history"] if current is not None else None
        await conn.execute(
            update(_opt_outs)
            .where(_opt_outs.c.recipient_ref == ref)
            .values(
                opted_out=True,
                channel=channel,
                opted_out_at=now,
                opted_in_at=None,
                history=_history(previous, "stop", channel, now),
            )
        )
    await conn.execute(
        update(_messages)
        .where(
            _messages.c.recipient_ref.in_(address_refs(ring, address)),
            _messages.c.state == "pending",
        )
        .values(state="suppressed", last_error="the recipient opted out (STOP)", updated_at=now)
    )
    return True


async def opt_in(
    conn: AsyncConnection, ring: KeyRing, *, address: str, channel: str, now: datetime
) -> bool:
    """Record a START; True when the number was opted out."""
    current = await _current(conn, ring, address)
    if current is None or not current["opted_out"]:
        return False
    await conn.execute(
        update(_opt_outs)
        .where(_opt_outs.c.recipient_ref == current["recipient_ref"])
        .values(
            opted_out=False,
            channel=channel,
            opted_in_at=now,
            history=_history(current["history"], "start", channel, now),
        )
    )
    return True


async def _current(conn: AsyncConnection, ring: KeyRing, address: str) -> RowMapping | None:
    """The number's opt-out row, whichever key (or the pre-0029 hash) it is stored under;
    an opted-out row first should a number ever have two."""
    o = _opt_outs
    query = (
        select(o.c.recipient_ref, o.c.opted_out, o.c.history)
        .where(o.c.recipient_ref.in_(opt_out_refs(ring, address)))
        .order_by(o.c.opted_out.desc(), o.c.opted_out_at.desc())
        .limit(1)
    )
    if conn.dialect.name == "postgresql":
        query = query.with_for_update()
    return (await conn.execute(query)).mappings().first()
