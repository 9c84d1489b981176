"""A durable scheduler: jobs are rows in ``scheduled_jobs``, run by the worker's periodic loop.

Each due job runs inside one write transaction together with its state change, so a crash
mid-job rolls the whole job back and it runs again after the restart (at-least-once; the
handlers are idempotent). A failing job is retried with exponential backoff and marked
``failed`` after ``MAX_ATTEMPTS`` (at once when it raises ``GiveUp``); the ``gave_up`` hook
it was run with is then called in the same transaction, so whoever waits for the job can be
told (the sandbox tells the partner: ``sandbox.scenario_failed``). On PostgreSQL several
workers claim with ``FOR UPDATE SKIP LOCKED``; on SQLite the single writer serialises them.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.clock import utcnow
from rehabref.db import Database, table
from rehabref.ids import new_id
from rehabref.tables.jobs import ScheduledJob

log = logging.getLogger("rehabref.jobs")
_jobs = table(ScheduledJob)

MAX_ATTEMPTS = 6
Handler = Callable[[AsyncConnection, dict[str, Any], datetime], Awaitable[None]]
# job kind -> what runs it (``wiring.job_handlers``)
Handlers = Mapping[str, Handler]


@dataclass(frozen=True)
class FailedJob:
    kind: str
    payload: dict[str, Any]
    referral_id: str | None
    attempts: int
    # Why, in words safe to show the job's owner: a NotReady or GiveUp message, else the
    # exception's type only.
    reason: str


# Called in the transaction that marks a job failed for good.
GaveUp = Callable[[AsyncConnection, FailedJob, datetime], Awaitable[None]]


class NotReady(Exception):
    """The job cannot run yet (what it waits for has not happened); retry later."""


class GiveUp(Exception):
    """The job can never run (what it needs will not happen): fail it now."""


def _reason(exc: Exception) -> str:
    if isinstance(exc, NotReady | GiveUp):
        return str(exc)[:200] or type(exc).__name__
    return f"internal error ({type(exc).__name__})"


# A ``scheduled_jobs`` row, as ``job_row`` makes it.
JobRow = dict[str, Any]


def job_row(
    *,
    kind: str,
    payload: dict[str, Any],
    due_at: datetime,
    now: datetime,
    referral_id: str | None = None,
) -> JobRow:
    """A pending job, for the caller to write in its transaction (``enqueue``, or a plan)."""
    return {
        "id": new_id("job"),
        "kind": kind,
        "payload": payload,
        "referral_id": referral_id,
        "due_at": due_at,
        "state": "pending",
        "attempts": 0,
        "locked_until": None,
        "last_error": None,
        "created_at": now,
        "updated_at": now,
    }


async def enqueue(
    conn: AsyncConnection,
    *,
    kind: str,
    payload: dict[str, Any],
    due_at: datetime,
    referral_id: str | None = None,
    now: datetime | None = None,
) -> str:
    """Write a pending job in the caller's transaction; its id."""
    row = job_row(
        kind=kind, payload=payload, due_at=due_at, now=now or utcnow(), referral_id=referral_id
    )
    await conn.execute(insert(_jobs), row)
    return str(row["id"])


async def _run_one(db: Database, now: datetime, handlers: Handlers, gave_up: GaveUp | None) -> bool:
    """Claim and run one due job; False when none is due."""
    failure: Exception | None = None
    async with db.write() as conn:
        query = (
            select(_jobs.c.id, _jobs.c.kind, _jobs.c.payload, _jobs.c.referral_id, _jobs.c.attempts)
            .where(_jobs.c.state == "pending", _jobs.c.due_at <= now)
            .order_by(_jobs.c.due_at)
            .limit(1)
        )
        if conn.dialect.name == "postgresql":
            query = query.with_for_update(skip_locked=True)
        job = (await conn.execute(query)).first()
        if job is None:
            return False
        fn = handlers.get(job.kind)
        try:
            if fn is None:
                raise NotReady(f"no handler for {job.kind}")
            async with conn.begin_nested():
                await fn(conn, dict(job.payload), now)
        except Exception as exc:  # the job fails, the loop goes on
            failure = exc
        else:
            await conn.execute(
                update(_jobs)
                .where(_jobs.c.id == job.id)
                .values(state="done", attempts=job.attempts + 1, updated_at=utcnow())
            )
            log.info("job done", extra={"job_id": job.id, "kind": job.kind})
        if failure is not None:
            attempts = job.attempts + 1
            final = attempts >= MAX_ATTEMPTS or isinstance(failure, GiveUp)
            error = type(failure).__name__
            await conn.execute(
                update(_jobs)
                .where(_jobs.c.id == job.id)
                .values(
                    state="failed" if final else "pending",
                    attempts=attempts,
                    due_at=now + timedelta(seconds=min(2**attempts, 300)),
                    last_error=error[:200],
                    updated_at=utcnow(),
                )
            )
            log.warning("job failed", extra={"job_id": job.id, "error_type": error})
            if final and gave_up is not None:
                failed = FailedJob(
                    job.kind, dict(job.payload), job.referral_id, attempts, _reason(failure)
                )
                try:
                    async with conn.begin_nested():
                        await gave_up(conn, failed, now)
                except Exception as exc:  # the job stays failed; its owner is not told
                    log.warning(
                        "job failure hook failed",
                        extra={"job_id": job.id, "error_type": type(exc).__name__},
                    )
    return True


async def any_due(db: Database, now: datetime) -> bool:
    """A cheap read first, so an idle poll never takes the (SQLite) write lock."""
    async with db.read() as conn:
        found = (
            await conn.execute(
                select(_jobs.c.id).where(_jobs.c.state == "pending", _jobs.c.due_at <= now).limit(1)
            )
        ).first()
    return found is not None


async def run_due(
    db: Database, *, handlers: Handlers, gave_up: GaveUp | None = None, limit: int = 50
) -> int:
    """Run up to ``limit`` due jobs, one transaction each; returns how many ran."""
    ran = 0
    now = utcnow()
    if not await any_due(db, now):
        return 0
    while ran < limit and await _run_one(db, now, handlers, gave_up):
        ran += 1
    return ran
