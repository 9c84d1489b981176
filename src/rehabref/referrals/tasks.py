"""A referral's human follow-up: the coordinator's contact tasks.

A task is opened when a partner asks for contact (``route: contact``), when a referral moves
to ``contact_pending``, when matching finds nobody (``unmatched``) and when the patient's
messages need a person (no channel, undeliverable, STOP, a hand-over from the assistant); it
is closed with the referral. Part of the referral core because the ``contact_pending``
status is defined by it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.db import table
from rehabref.fastsql import Connection, Statement, execute
from rehabref.ids import new_id
from rehabref.referrals.rows import ReferralRow
from rehabref.tables.intake import ContactTask

_tasks = table(ContactTask)
_INSERT_TASK = Statement(insert(_tasks))


def contact_task(
    *,
    referral_id: str,
    partner_id: str,
    environment: str,
    channel: str,
    purpose: str,
    now: datetime,
) -> dict[str, Any]:
    """A new open task row, for the caller to write in its transaction."""
    return {
        "id": new_id("task"),
        "referral_id": referral_id,
        "partner_id": partner_id,
        "environment": environment,
        "channel": channel,
        "purpose": purpose,
        "status": "open",
        "claimed_by": None,
        "created_at": now,
        "updated_at": now,
    }


async def open_contact_task(
    conn: Connection,
    *,
    referral_id: str,
    partner_id: str,
    environment: str,
    channel: str,
    purpose: str,
    now: datetime,
) -> str:
    row = contact_task(
        referral_id=referral_id,
        partner_id=partner_id,
        environment=environment,
        channel=channel,
        purpose=purpose,
        now=now,
    )
    await execute(conn, _INSERT_TASK, row)
    return str(row["id"])


async def open_task_once(
    conn: AsyncConnection, *, referral: ReferralRow, purpose: str, now: datetime
) -> bool:
    """One open task per referral and purpose, however often its cause repeats; True when
    this call opened it."""
    if await task_open(conn, referral.id, purpose):
        return False
    await open_contact_task(
        conn,
        referral_id=referral.id,
        partner_id=referral.partner_id,
        environment=referral.environment,
        channel=referral.preferred_contact or "messaging",
        purpose=purpose,
        now=now,
    )
    return True


async def open_unmatched_task(
    conn: AsyncConnection, *, referral: ReferralRow, now: datetime
) -> None:
    await open_task_once(conn, referral=referral, purpose="unmatched", now=now)


async def task_open(conn: AsyncConnection, referral_id: str, purpose: str) -> bool:
    found = (
        await conn.execute(
            select(_tasks.c.id).where(
                _tasks.c.referral_id == referral_id,
                _tasks.c.purpose == purpose,
                _tasks.c.status != "done",
            )
        )
    ).first()
    return found is not None


async def unmatched_task_open(conn: AsyncConnection, referral_id: str) -> bool:
    return await task_open(conn, referral_id, "unmatched")


async def close_open_tasks(conn: AsyncConnection, *, referral_id: str, now: datetime) -> None:
    await conn.execute(
        update(_tasks)
        .where(_tasks.c.referral_id == referral_id, _tasks.c.status != "done")
        .values(status="done", outcome="cancelled", completed_at=now, updated_at=now)
    )


async def resolve_tasks(
    conn: AsyncConnection, *, referral_id: str, purpose: str, outcome: str, now: datetime
) -> None:
    """Close the referral's open tasks of one purpose whose cause is gone (e.g. ``unmatched``
    once a physiotherapist is assigned)."""
    await conn.execute(
        update(_tasks)
        .where(
            _tasks.c.referral_id == referral_id,
            _tasks.c.purpose == purpose,
            _tasks.c.status != "done",
        )
        .values(status="done", outcome=outcome, completed_at=now, updated_at=now)
    )
