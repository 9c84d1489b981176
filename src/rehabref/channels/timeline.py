"""A referral's conversation as a coordinator reads it: every message both ways, in order,
with its channel and its provider status (the newest 500 each way). For operators only:
partners never receive conversation text (the spec's data boundary). The text is stored
sealed and opened here for display (channels/sealing.py)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.channels.content import from_json, plain_text
from rehabref.channels.sealing import opened_inbound, opened_message
from rehabref.clock import as_utc
from rehabref.crypto import KeyRing, SealedValueError
from rehabref.db import table
from rehabref.tables.channels import InboundMessage, OutboundMessage

_outbound = table(OutboundMessage)
_inbound = table(InboundMessage)
LIMIT = 500
UNREADABLE = "[cannot be opened with the key ring]"


# The assistant link carries the patient's bearer token: a coordinator sees that a link was
# sent, not the token itself.
_ASSISTANT_TOKEN = re.compile(r"(/a/)[A-Za-z0-9_.~-]+")


def without_tokens(text: str) -> str:
    return _ASSISTANT_TOKEN.sub(r"\1…", text)


@dataclass(frozen=True)
class TimelineEntry:
    at: datetime
    direction: str  # out | in
    channel: str
    status: str
    text: str
    purpose: str
    error: str | None


def _sent(ring: KeyRing, stored: Mapping[Any, Any]) -> TimelineEntry:
    try:
        row = opened_message(ring, stored)
        text = without_tokens(plain_text(from_json(row["content"])))
    except SealedValueError:  # sealed under a key since removed from the ring
        row, text = dict(stored), UNREADABLE
    return TimelineEntry(
        at=as_utc(row["created_at"]),
        direction="out",
        channel=row["channel"],
        status=row["state"],
        text=text,
        purpose=row["purpose"],
        error=row["last_error"],
    )


def _received(ring: KeyRing, stored: Mapping[Any, Any]) -> TimelineEntry:
    try:
        row = opened_inbound(ring, stored)
        text = row["text"] or (f"[chose {row['choice_id']}]" if row["choice_id"] else "")
    except SealedValueError:
        row, text = dict(stored), UNREADABLE
    return TimelineEntry(
        at=as_utc(row["received_at"]),
        direction="in",
        channel=row["channel"],
        status="received",
        text=text,
        purpose="patient reply",
        error=None,
    )


async def timeline(conn: AsyncConnection, ring: KeyRing, referral_id: str) -> list[TimelineEntry]:
    out = await conn.execute(
        select(_outbound)
        .where(_outbound.c.referral_id == referral_id)
        .order_by(_outbound.c.id.desc())
        .limit(LIMIT)
    )
    entries = [_sent(ring, row) for row in out.mappings()]
    came_in = await conn.execute(
        select(_inbound)
        .where(_inbound.c.referral_id == referral_id)
        .order_by(_inbound.c.received_at.desc())
        .limit(LIMIT)
    )
    entries += [_received(ring, row) for row in came_in.mappings()]
    return sorted(entries, key=lambda entry: entry.at)
