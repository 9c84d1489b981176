"""Read records appended in groups: one transaction for every read waiting to be recorded.

Threat: patient data answered without a durable audit record. ``record`` returns only once
its record is committed (``synchronous_commit`` on: after the WAL flush), and raises if the
group it was in failed, so the caller answers with data only after its record is durable, as
with ``trail.record_read``; every record of a failed group fails its request (a 500).

Concurrency: one process's reads wait in ``_waiting``. A flusher task (at most one per
process) takes what is waiting (at most ``group_limit`` records), appends it in one
transaction, wakes those requests, and starts again while more arrived meanwhile; no timer,
so a lone read waits for one commit, as before. Whatever ends a group (an error, the
flusher's own cancellation at shutdown), each of its requests is woken with the outcome. The
flusher runs in a fresh context, so its log lines name no request or partner.

On PostgreSQL the group is one ``executemany`` of ``trail.APPEND`` on a raw autocommit
connection: asyncpg sends every record and one Sync, so PostgreSQL runs them as
one implicit transaction (all or none) and flushes the WAL once for the group. The records
take consecutive places in the connection's chain, each chained to the one before it,
exactly as separate appends would. On SQLite the group is one write transaction.

Why: a read's own commit, the WAL flush above all, cost PostgreSQL more CPU than the read;
grouping spreads one commit over every read that arrived while the previous group flushed
(docs/decisions.md 18.15).
"""

from __future__ import annotations

import asyncio
import contextvars

from rehabref.audit.chain import Entry
from rehabref.audit.trail import APPEND, columns, record
from rehabref.db import Database
from rehabref.fastsql import RawConnection

# A bound on one transaction's size: a burst is committed in several groups.
GROUP_LIMIT = 256


class ReadRecorder:
    """Appends read records to the audit trail, many reads' records per transaction."""

    def __init__(self, db: Database, *, group_limit: int = GROUP_LIMIT) -> None:
        self._db = db
        self._group_limit = group_limit
        self._waiting: list[tuple[Entry, asyncio.Future[None]]] = []
        self._flusher: asyncio.Task[None] | None = None

    async def record(self, item: Entry) -> None:
        """Return once ``item`` is committed; raise if it could not be."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append((item, done))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush(), context=contextvars.Context())
        # A request cancelled while waiting cancels only its future: its record stays queued
        # and is written all the same.
        await done

    async def _flush(self) -> None:
        while self._waiting:
            group = self._waiting[: self._group_limit]
            del self._waiting[: self._group_limit]
            try:
                await self._append([item for item, _ in group])
            except BaseException as exc:  # every request of the group answers with a 500
                failure = exc if isinstance(exc, Exception) else RuntimeError("not recorded")
                for _, done in group:
                    if not done.done():
                        done.set_exception(failure)
                if not isinstance(exc, Exception):
                    self._fail_waiting(failure)
                    raise
            else:
                for _, done in group:
                    if not done.done():
                        done.set_result(None)

    def _fail_waiting(self, failure: Exception) -> None:
        """The flusher is ending (cancelled): nobody waits for a commit that will not come."""
        waiting, self._waiting = self._waiting, []
        for _, done in waiting:
            if not done.done():
                done.set_exception(failure)

    async def _append(self, items: list[Entry]) -> None:
        async with self._db.autocommit() as conn:
            if isinstance(conn, RawConnection):
                # One implicit transaction for the whole group (see the module docstring).
                await conn.driver.executemany(APPEND, [columns(item) for item in items])
            else:
                for item in items:
                    await record(conn, item)
