"""Retention: personal data is kept only as long as documented (docs/security.md).

Threat: data kept "just in case" is data that leaks. Three kinds have a period:

- ``idempotency_replies``: a partner's remembered create reply holds the patient's name,
  phone and a live assistant link; it goes when it expires (24 h after the request).
- ``assistant_sessions``: the row behind an assistant link that was never completed goes
  ``REHABREF_RETENTION_ASSISTANT_SESSION_DAYS`` (default 30) after the link expired; the
  link then says "not recognised". Completed ones are the referral's intake and go with it.
- ``closed_referrals``: a referral closed or cancelled more than
  ``REHABREF_RETENTION_CLOSED_REFERRAL_DAYS`` (default 365) ago is scrubbed like an erasure
  (``person_erasure``, its own rows only): ids, dates, statuses and amounts stay.

``cutoffs`` and the ``*_due`` predicates are the policy, pure (time passed in); ``enforce``
applies them in SQL, in batches, and with ``dry_run`` only counts. The worker runs it every
hour (``wiring.periodic_jobs``); ``rehabref retention --dry-run`` prints the report.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, Table, and_, delete, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.audit.trail import entry, record
from rehabref.clock import as_utc
from rehabref.config import Settings
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.tables.idempotency import IdempotencyRecord
from rehabref.tables.intake import AssistantSession
from rehabref.tables.referrals import Referral
from rehabref.workflows.person_erasure import erase_referrals

KINDS = ("idempotency_replies", "assistant_sessions", "closed_referrals")
ENDED = ("closed", "cancelled")
# Referrals scrubbed per run: one transaction stays short; the next run takes the rest.
BATCH = 200

_records = table(IdempotencyRecord)
_assistant = table(AssistantSession)
_referrals = table(Referral)


@dataclass(frozen=True)
class Periods:
    assistant_sessions: timedelta
    closed_referrals: timedelta


@dataclass(frozen=True)
class Cutoffs:
    """Rows at or before these moments are due."""

    idempotency_expired: datetime  # expires_at <= this
    assistant_expired: datetime  # expires_at <= this, never completed
    referral_ended: datetime  # ended, last changed <= this, not yet erased


def periods_of(settings: Settings) -> Periods:
    return Periods(
        assistant_sessions=timedelta(days=settings.retention_assistant_session_days),
        closed_referrals=timedelta(days=settings.retention_closed_referral_days),
    )


def cutoffs(periods: Periods, now: datetime) -> Cutoffs:
    return Cutoffs(
        idempotency_expired=now,
        assistant_expired=now - periods.assistant_sessions,
        referral_ended=now - periods.closed_referrals,
    )


def reply_due(expires_at: datetime, at: Cutoffs) -> bool:
    return as_utc(expires_at) <= at.idempotency_expired


def session_due(expires_at: datetime, completed_at: datetime | None, at: Cutoffs) -> bool:
    return completed_at is None and as_utc(expires_at) <= at.assistant_expired


def referral_due(
    status: str, updated_at: datetime, erased_at: datetime | None, at: Cutoffs
) -> bool:
    return status in ENDED and erased_at is None and as_utc(updated_at) <= at.referral_ended


def _replies(at: Cutoffs) -> ColumnElement[bool]:
    return _records.c.expires_at <= at.idempotency_expired


def _sessions(at: Cutoffs) -> ColumnElement[bool]:
    return and_(
        _assistant.c.completed_at.is_(None), _assistant.c.expires_at <= at.assistant_expired
    )


def _referrals_due(at: Cutoffs) -> ColumnElement[bool]:
    return and_(
        _referrals.c.status.in_(ENDED),
        _referrals.c.erased_at.is_(None),
        _referrals.c.updated_at <= at.referral_ended,
    )


async def _count(conn: AsyncConnection, source: Table, where: ColumnElement[bool]) -> int:
    found = await conn.execute(select(func.count()).select_from(source).where(where))
    return int(found.scalar_one())


async def enforce(
    conn: AsyncConnection, periods: Periods, *, ring: KeyRing, now: datetime, dry_run: bool
) -> dict[str, int]:
    """Rows due per kind (``dry_run``), or removed / scrubbed this run."""
    at = cutoffs(periods, now)
    if dry_run:
        return {
            "idempotency_replies": await _count(conn, _records, _replies(at)),
            "assistant_sessions": await _count(conn, _assistant, _sessions(at)),
            "closed_referrals": await _count(conn, _referrals, _referrals_due(at)),
        }
    replies = await conn.execute(delete(_records).where(_replies(at)))
    sessions = await conn.execute(delete(_assistant).where(_sessions(at)))
    due = (
        await conn.execute(
            select(_referrals).where(_referrals_due(at)).order_by(_referrals.c.id).limit(BATCH)
        )
    ).all()
    if due:
        await erase_referrals(conn, due, ring=ring, actor="retention", now=now, whole_person=False)
        for referral in due:
            await record(
                conn, entry("system:retention", "retention.scrubbed", referral_id=referral.id)
            )
    return {
        "idempotency_replies": int(replies.rowcount or 0),
        "assistant_sessions": int(sessions.rowcount or 0),
        "closed_referrals": len(due),
    }
