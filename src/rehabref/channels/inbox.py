"""What providers tell us: patients' messages (kept once each) and delivery statuses.

A provider webhook is answered as soon as its contents are stored: ``record_inbound`` keeps
each message once (a provider that delivers it twice finds its id taken) and the caller
schedules the work on it in the same transaction. ``apply_status`` moves a message's state
forward only (callbacks arrive out of order) and routes a ``failed`` message on.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.channels.failures import Fallback
from rehabref.channels.inbound import InboundMessage, StatusUpdate, storable
from rehabref.channels.policy import status_after
from rehabref.channels.sealing import opened_inbound, opened_message, sealed_inbound_columns
from rehabref.crypto import KeyRing, SealedValueError
from rehabref.db import insert_ignoring_duplicates, table
from rehabref.ids import new_id
from rehabref.jobs import enqueue as enqueue_job
from rehabref.tables.channels import InboundMessage as InboundRow
from rehabref.tables.channels import OutboundMessage

log = logging.getLogger("rehabref.messages")

_inbound = table(InboundRow)
_messages = table(OutboundMessage)


async def record_inbound(
    conn: AsyncConnection, ring: KeyRing, message: InboundMessage, *, channel: str, now: datetime
) -> str | None:
    """Keep a patient's message (sender, text and choice sealed); its id, or None when the
    provider sent it before."""
    row = {
        "id": new_id("inm"),
        "provider": message.provider,
        "provider_message_id": message.provider_message_id[:120],
        "channel": channel,
        **sealed_inbound_columns(
            ring,
            sender=message.sender[:32],
            text=storable(message.text, 4096),
            choice_id=storable(message.choice_id, 200),
        ),
        "context_id": storable(message.context_id, 120),
        "referral_id": None,
        "received_at": message.received_at,
        "processed_at": None,
        "created_at": now,
    }
    return str(row["id"]) if await insert_ignoring_duplicates(conn, _inbound, row) else None


async def apply_status(
    conn: AsyncConnection,
    ring: KeyRing,
    status: StatusUpdate,
    *,
    fallback: Fallback,
    now: datetime,
) -> str | None:
    """Record a provider's status for one of our messages; the new state, if it changed."""
    m = _messages
    # Our own id first: the status may come before the worker recorded the provider's id.
    found = (
        m.c.id == status.our_message_id
        if status.our_message_id
        else m.c.provider_message_id == status.provider_message_id[:120]
    )
    query = select(m).where(found)
    if conn.dialect.name == "postgresql":
        query = query.with_for_update()
    message = (await conn.execute(query)).mappings().first()
    if message is None:
        return None
    new_state = status_after(message["state"], status.status)
    if new_state is None:
        return None
    reason = f"{status.provider} {status.error_code or 'failed'} (status callback)"
    await conn.execute(
        update(m)
        .where(m.c.id == message["id"])
        .values(
            state=new_state,
            provider_message_id=status.provider_message_id[:120],
            status_at=now,
            updated_at=now,
            **({"last_error": reason[:200]} if new_state == "failed" else {}),
        )
    )
    if new_state == "failed":
        try:
            opened = opened_message(ring, message)
        except SealedValueError:  # sealed under a key since removed: nothing to fall back with
            log.warning("failed message cannot be opened", extra={"message_id": message["id"]})
            return new_state
        await fallback.failed(conn, opened, reason, now)
    return new_state


async def unprocessed(
    conn: AsyncConnection, ring: KeyRing, inbound_id: str
) -> dict[str, Any] | None:
    """A stored inbound message not yet acted on (locked on PostgreSQL), opened, or None."""
    query = select(_inbound).where(_inbound.c.id == inbound_id, _inbound.c.processed_at.is_(None))
    if conn.dialect.name == "postgresql":
        query = query.with_for_update()
    found = (await conn.execute(query)).mappings().first()
    return None if found is None else opened_inbound(ring, found)


async def mark_processed(
    conn: AsyncConnection, *, inbound_id: str, referral_id: str | None, now: datetime
) -> None:
    await conn.execute(
        update(_inbound)
        .where(_inbound.c.id == inbound_id)
        .values(processed_at=now, referral_id=referral_id)
    )


INBOUND_JOB = "channels.inbound"


async def receive(
    conn: AsyncConnection,
    ring: KeyRing,
    items: Sequence[InboundMessage | StatusUpdate],
    *,
    channel: str,
    fallback: Fallback,
    now: datetime,
) -> int:
    """Store what a provider webhook carried, in the webhook's transaction: each new message
    with a ``channels.inbound`` job to act on it; each status applied. How many were new."""
    new = 0
    for item in items:
        if isinstance(item, StatusUpdate):
            await apply_status(conn, ring, item, fallback=fallback, now=now)
            continue
        inbound_id = await record_inbound(conn, ring, item, channel=channel, now=now)
        if inbound_id is not None:
            new += 1
            await enqueue_job(
                conn, kind=INBOUND_JOB, payload={"inbound_id": inbound_id}, due_at=now, now=now
            )
    return new
