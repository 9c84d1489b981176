"""The durable scheduler gives up on a job and calls its give-up hook, which the sandbox
uses to tell the partner (``sandbox.scenario_failed``; end to end in test_scenarios.py)."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.db import Database
from rehabref.jobs import FailedJob, GiveUp, NotReady, enqueue, run_due
from tests.support.databases import fresh_database

LONG_AGO = datetime(2026, 1, 1, tzinfo=UTC)


def test_the_scheduler_gives_up_after_its_attempts_or_at_once(tmp_path):
    """NotReady is retried until MAX_ATTEMPTS, GiveUp fails at once; the hook hears both,
    with a reason safe to show (a NotReady/GiveUp message, else the exception type only).
    A database of its own: no server's worker runs these jobs."""
    told: list[FailedJob] = []

    async def gave_up(conn: AsyncConnection, failed: FailedJob, now: datetime) -> None:
        told.append(failed)

    async def waits(conn: AsyncConnection, payload: dict[str, Any], now: datetime) -> None:
        raise NotReady("still waiting")

    async def hopeless(conn: AsyncConnection, payload: dict[str, Any], now: datetime) -> None:
        raise GiveUp("can never run")

    async def broken(conn: AsyncConnection, payload: dict[str, Any], now: datetime) -> None:
        raise RuntimeError("secret detail")

    handlers = {"test.waits": waits, "test.hopeless": hopeless, "test.broken": broken}

    async def work(database_url: str) -> list[tuple[str, str, int]]:
        db = Database(database_url, pool_size=1)
        marker = uuid.uuid4().hex
        try:
            async with db.write() as conn:
                for kind in handlers:
                    await enqueue(conn, kind=kind, payload={"marker": marker}, due_at=LONG_AGO)
            for _ in range(6):
                await run_due(db, handlers=handlers, gave_up=gave_up)
                async with db.write() as conn:  # the next retry is due now
                    await conn.execute(
                        text("UPDATE scheduled_jobs SET due_at = :t WHERE state = 'pending'"),
                        {"t": LONG_AGO},
                    )
            async with db.read() as conn:
                rows = await conn.execute(
                    text(
                        "SELECT kind, state, attempts FROM scheduled_jobs WHERE kind LIKE 'test.%'"
                    )
                )
                return sorted((row.kind, row.state, row.attempts) for row in rows)
        finally:
            await db.dispose()

    with fresh_database(tmp_path) as database_url:
        ran = asyncio.run(work(database_url))
    assert ran == [
        ("test.broken", "failed", 6),
        ("test.hopeless", "failed", 1),
        ("test.waits", "failed", 6),
    ]
    assert sorted((f.kind, f.attempts, f.reason) for f in told) == [
        ("test.broken", 6, "internal error (RuntimeError)"),
        ("test.hopeless", 1, "can never run"),
        ("test.waits", 6, "still waiting"),
    ]
