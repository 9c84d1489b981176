"""Reading the audit trail back: filtered, newest first, in keyset pages by record id
(ids are time-ordered; ``seq`` is a position within one of the chains)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref import fields
from rehabref.audit.rows import AuditEventRow
from rehabref.clock import iso
from rehabref.cursors import decode_cursor, encode_cursor, page_params
from rehabref.db import table
from rehabref.tables.audit import AuditEvent

_events = table(AuditEvent)
_AUDIT_ID = re.compile(r"^aud_[0-9A-Za-z]{1,30}$")
_ID = re.compile(r"^[A-Za-z0-9_:.\-]{1,100}$")


class AuditQuery:
    """The filters of ``GET /api/v1/ops/audit-events`` and the console page, parsed."""

    def __init__(self, query: Mapping[str, str], problems: dict[str, str]) -> None:
        self.limit, self.before_id = page_params(query, _decode, problems)
        self.referral_id = _identifier(query, "referral_id", problems)
        self.actor_id = _identifier(query, "actor_id", problems)
        self.since: datetime | None = None
        raw_since = query.get("since")
        if raw_since:
            try:
                self.since = fields.utc_timestamp_any(raw_since)
            except ValueError as exc:
                problems["since"] = str(exc)


def _decode(cursor: str) -> str | None:
    return decode_cursor(cursor, _AUDIT_ID)


def encode(last_id: str) -> str:
    return encode_cursor(last_id)


def _identifier(query: Mapping[str, str], name: str, problems: dict[str, str]) -> str | None:
    value = query.get(name)
    if not value:
        return None
    if not _ID.match(value):
        problems[name] = "At most 100 letters, digits and _ : . - characters."
        return None
    return value


async def list_events(
    conn: AsyncConnection, where: AuditQuery
) -> tuple[Sequence[AuditEventRow], bool]:
    statement = select(_events).order_by(_events.c.id.desc()).limit(where.limit + 1)
    if where.referral_id is not None:
        statement = statement.where(_events.c.referral_id == where.referral_id)
    if where.actor_id is not None:
        statement = statement.where(_events.c.actor_id == where.actor_id)
    if where.since is not None:
        statement = statement.where(_events.c.at >= where.since)
    if where.before_id is not None:
        statement = statement.where(_events.c.id < where.before_id)
    rows = (await conn.execute(statement)).all()
    return rows[: where.limit], len(rows) > where.limit


def event_view(row: AuditEventRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "chain": row.chain,
        "seq": row.seq,
        "at": iso(row.at),
        "actor_kind": row.actor_kind,
        "actor_id": row.actor_id,
        "action": row.action,
        "referral_id": row.referral_id,
        "subject": row.subject,
        "request_id": row.request_id,
        "hash": row.hash,
    }
