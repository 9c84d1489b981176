"""Read records appended in groups: one transaction for every read waiting to be recorded.

Threat: patient data answered without a durable audit record. ``record`` returns only once
its record is committed (``synchronous_commit`` on: after the WAL flush), and raises if the
group it was in failed, so the caller answers with data only after its record is durable, as
with ``trail.record_read``; every record of a failed group fails its request (a 500).

Concurrency: one process's reads wait in ``_waiting``. A flusher task (at most one per
process) takes everything waiting, appends it in one transaction, wakes those requests, and
starts again while more arrived meanwhile; no timer, so a lone read waits for one commit,
as before. On PostgreSQL the group is one ``executemany`` of ``trail.APPEND`` on a raw
autocommit connection: asyncpg sends every record and one Sync, so PostgreSQL runs them as
one implicit transaction (all or none) and flushes the WAL once for the group. The records
take consecutive places in the connection's chain, each chained to the one before it,
exactly as separate appends would. On SQLite the group is one write transaction.

Why: a read's own commit, the WAL flush above all, cost PostgreSQL more CPU than the read;
grouping spreads one commit over every read that arrived while the previous group flushed
(docs/decisions.md 18.15).
"""

from __future__ import annotations

import asyncio

from rehabref.audit.chain import Entry
from rehabref.audit.trail import APPEND, columns, record
from rehabref.db import Database
from rehabref.fastsql import RawConnection


class ReadRecorder:
    """Appends read records to the audit trail, many reads' records per transaction."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._waiting: list[tuple[Entry, asyncio.Future[None]]] = []
        self._flusher: asyncio.Task[None] | None = None

    async def record(self, item: Entry) -> None:
        """Return once ``item`` is committed; raise if it could not be."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append((item, done))
        if self._flusher is None:
            self._flusher = asyncio.create_task(self._flush())
        # A request cancelled while waiting leaves its record to be written all the same.
        await asyncio.shield(done)

    async def _flush(self) -> None:
        try:
            while self._waiting:
                group, self._waiting = self._waiting, []
                try:
                    await self._append([item for item, _ in group])
                except Exception as exc:  # every request of the group answers with a 500
                    for _, done in group:
                        if not done.done():
                            done.set_exception(exc)
                else:
                    for _, done in group:
                        if not done.done():
                            done.set_result(None)
        finally:
            self._flusher = None

    async def _append(self, items: list[Entry]) -> None:
        async with self._db.autocommit() as conn:
            if isinstance(conn, RawConnection):
                # One implicit transaction for the whole group (see the module docstring).
                await conn.driver.executemany(APPEND, [columns(item) for item in items])
            else:
                for item in items:
                    await record(conn, item)
