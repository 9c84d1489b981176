"""A referral's conversation as a coordinator reads it: every message both ways, in order,
with its channel and its provider status (the newest 500 each way). For operators only:
partners never receive conversation text (the spec's data boundary). The text is stored
sealed and opened here for display (channels/sealing.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.channels.content import from_json, plain_text
from rehabref.channels.sealing import opened_inbound, opened_message
from rehabref.clock import as_utc
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.tables.channels import InboundMessage, OutboundMessage

_outbound = table(OutboundMessage)
_inbound = table(InboundMessage)
LIMIT = 500


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


async def timeline(conn: AsyncConnection, ring: KeyRing, referral_id: str) -> list[TimelineEntry]:
    out = await conn.execute(
        select(_outbound)
        .where(_outbound.c.referral_id == referral_id)
        .order_by(_outbound.c.id.desc())
        .limit(LIMIT)
    )
    entries = [
        TimelineEntry(
            at=as_utc(row["created_at"]),
            direction="out",
            channel=row["channel"],
            status=row["state"],
            text=without_tokens(plain_text(from_json(row["content"]))),
            purpose=row["purpose"],
            error=row["last_error"],
        )
        for row in (opened_message(ring, found) for found in out.mappings())
    ]
    came_in = await conn.execute(
        select(_inbound)
        .where(_inbound.c.referral_id == referral_id)
        .order_by(_inbound.c.received_at.desc())
        .limit(LIMIT)
    )
    entries += [
        TimelineEntry(
            at=as_utc(row["received_at"]),
            direction="in",
            channel=row["channel"],
            status="received",
            text=row["text"] or (f"[chose {row['choice_id']}]" if row["choice_id"] else ""),
            purpose="patient reply",
            error=None,
        )
        for row in (opened_inbound(ring, found) for found in came_in.mappings())
    ]
    return sorted(entries, key=lambda entry: entry.at)
