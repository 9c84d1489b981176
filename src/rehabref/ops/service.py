"""Coordinator queries and contact-task moves. Keyword-only, caller-owned connection."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from types import SimpleNamespace
from typing import Any, Protocol

from sqlalchemy import or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref import cursors
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.errors import ApiError
from rehabref.intake.rows import AssistantSessionRow
from rehabref.referrals.coordinator_notes import opened_transition, sealed_task_note
from rehabref.referrals.rows import ContactTaskRow, PatientColumns, ReferralRow
from rehabref.scope import OperatorScope
from rehabref.tables.intake import AssistantSession, ContactTask
from rehabref.tables.referrals import Referral, ReferralTransition

_referrals = table(Referral)
_transitions = table(ReferralTransition)
_tasks = table(ContactTask)
_sessions = table(AssistantSession)

_CURSOR_ID = re.compile(r"^[a-z]{2,6}_[0-9a-z]{26}$")
TASK_STATUSES = ("open", "claimed", "done")


def encode_cursor(last_id: str) -> str:
    return cursors.encode_cursor(last_id)


def decode_cursor(cursor: str) -> str | None:
    return cursors.decode_cursor(cursor, _CURSOR_ID)


@dataclass(frozen=True)
class ReferralFilter:
    status: str | None = None
    search: str | None = None


async def list_referrals(
    conn: AsyncConnection,
    *,
    scope: OperatorScope,
    where: ReferralFilter,
    before_id: str | None,
    limit: int,
) -> tuple[list[ReferralRow], bool]:
    """Newest first across partners (those ``scope`` names, or all); ``search`` matches an
    identifier exactly."""
    query = scope.select(_referrals)
    if where.status is not None:
        query = query.where(_referrals.c.status == where.status)
    if where.search:
        term = where.search
        query = query.where(
            or_(
                _referrals.c.id == term,
                _referrals.c.external_ref == term,
                _referrals.c.partner_reference == term,
                _referrals.c.tracking_code == term,
            )
        )
    if before_id is not None:
        query = query.where(_referrals.c.id < before_id)
    rows = (await conn.execute(query.order_by(_referrals.c.id.desc()).limit(limit + 1))).all()
    return list(rows[:limit]), len(rows) > limit


async def get_referral(conn: AsyncConnection, referral_id: str) -> ReferralRow | None:
    return (await conn.execute(select(_referrals).where(_referrals.c.id == referral_id))).first()


async def history(conn: AsyncConnection, ring: KeyRing, referral_id: str) -> list[SimpleNamespace]:
    """The referral's moves, oldest first, their reasons opened."""
    found = await conn.execute(
        select(_transitions)
        .where(_transitions.c.referral_id == referral_id)
        .order_by(_transitions.c.created_at, _transitions.c.id)
    )
    return [opened_transition(ring, row) for row in found.all()]


async def latest_intake(conn: AsyncConnection, referral_id: str) -> AssistantSessionRow | None:
    return (
        await conn.execute(
            select(_sessions)
            .where(_sessions.c.referral_id == referral_id)
            .order_by(_sessions.c.created_at.desc(), _sessions.c.id.desc())
            .limit(1)
        )
    ).first()


class QueuedTask(ContactTaskRow, PatientColumns, Protocol):
    """A contact task with its patient, as the queue shows it (``_task_query``)."""

    @property
    def referral_status(self) -> str: ...

    @property
    def _mapping(self) -> Mapping[Any, Any]:
        """All the columns by name: SQLAlchemy's public ``Row._mapping`` (underscored only to
        stay clear of column names), for the console's list."""
        ...


def _task_query() -> Any:
    return select(
        _tasks,
        _referrals.c.patient_first_name,
        _referrals.c.patient_last_name,
        _referrals.c.patient_phone,
        _referrals.c.patient_email,
        _referrals.c.patient_city,
        _referrals.c.patient_area,
        _referrals.c.status.label("referral_status"),
    ).join(_referrals, _referrals.c.id == _tasks.c.referral_id)


async def list_tasks(
    conn: AsyncConnection, *, status: str, after_id: str | None, limit: int
) -> tuple[list[QueuedTask], bool]:
    """The queue: oldest first, so the longest-waiting patient is called first."""
    query = _task_query().where(_tasks.c.status == status)
    if after_id is not None:
        query = query.where(_tasks.c.id > after_id)
    rows = (await conn.execute(query.order_by(_tasks.c.id).limit(limit + 1))).all()
    return list(rows[:limit]), len(rows) > limit


async def get_task(conn: AsyncConnection, task_id: str) -> QueuedTask:
    row: QueuedTask | None = (
        await conn.execute(_task_query().where(_tasks.c.id == task_id))
    ).first()
    if row is None:
        raise ApiError(404, "not_found", "No contact task with this identifier.")
    return row


async def _locked_task(conn: AsyncConnection, task_id: str) -> ContactTaskRow:
    row = (
        await conn.execute(select(_tasks).where(_tasks.c.id == task_id).with_for_update())
    ).first()
    if row is None:
        raise ApiError(404, "not_found", "No contact task with this identifier.")
    return row


async def claim_task(conn: AsyncConnection, *, task_id: str, actor: str, now: datetime) -> None:
    """open -> claimed by ``actor``; claiming your own claimed task again is a no-op."""
    task = await _locked_task(conn, task_id)
    if task.status == "claimed" and task.claimed_by == actor:
        return
    if task.status != "open":
        who = " by another coordinator" if task.status == "claimed" else ""
        raise ApiError(
            409,
            "invalid_transition",
            f"This contact task is {task.status}{who}; it cannot be claimed.",
        )
    await conn.execute(
        update(_tasks)
        .where(_tasks.c.id == task_id)
        .values(status="claimed", claimed_by=actor, updated_at=now)
    )


async def complete_task(
    conn: AsyncConnection,
    *,
    task_id: str,
    actor: str,
    outcome: str,
    note: str | None,
    now: datetime,
    ring: KeyRing,
) -> ContactTaskRow:
    """open|claimed (by this coordinator) -> done with an outcome; returns the task row."""
    task = await _locked_task(conn, task_id)
    if task.status == "done" or (task.status == "claimed" and task.claimed_by != actor):
        raise ApiError(
            409,
            "invalid_transition",
            "This contact task is done or claimed by another coordinator.",
        )
    await conn.execute(
        update(_tasks)
        .where(_tasks.c.id == task_id)
        .values(
            status="done",
            claimed_by=task.claimed_by or actor,
            outcome=outcome,
            note=sealed_task_note(ring, note),
            completed_at=now,
            updated_at=now,
        )
    )
    return task
