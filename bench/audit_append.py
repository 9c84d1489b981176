"""Microbenchmark of the audit trail's append on PostgreSQL: chained vs a plain insert.

Each API read adds one audit statement (``audit.trail.APPEND``: UPDATE the chain head and
INSERT the record, one round trip in autocommit); the referral create carries the same two
CTEs in its one statement. This measures what that costs: ``--count`` appends from
``--connections`` concurrent raw connections, first as the chained append, then as a plain
INSERT of the same row into an unchained copy of the table (what an audit row without the
hash chain would cost). Usage: ``python -m bench.audit_append [--count N] [--connections N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import asyncpg

from bench.environment import fresh_database
from rehabref.audit.trail import APPEND, columns, entry

PLAIN = """
INSERT INTO audit_plain (
    id, chain, seq, at, actor_kind, actor_id, action, referral_id, subject, request_id,
    prev_hash, hash)
VALUES ($2, 1, nextval('audit_plain_seq'), $3, $4, $5, $6, $7, $8, $9, '', left($1, 64))
"""


async def _drive(url: str, statement: str, count: int, connections: int) -> tuple[float, float]:
    dsn = url.replace("postgresql+asyncpg", "postgresql")
    pool = [await asyncpg.connect(dsn) for _ in range(connections)]
    latencies: list[float] = []

    async def worker(conn: asyncpg.Connection, share: int) -> None:
        for n in range(share):
            item = entry("partner:ptn_bench:key_bench", "referral.read", referral_id=f"ref_{n}")
            started = time.perf_counter()
            await conn.execute(statement, *columns(item))
            latencies.append(time.perf_counter() - started)

    started = time.perf_counter()
    await asyncio.gather(*(worker(conn, count // connections) for conn in pool))
    elapsed = time.perf_counter() - started
    for conn in pool:
        await conn.close()
    latencies.sort()
    return len(latencies) / elapsed, latencies[len(latencies) // 2] * 1000


async def main(url: str, count: int, connections: int) -> None:
    setup = await asyncpg.connect(url)
    await setup.execute(
        "CREATE TABLE audit_plain (LIKE audit_events INCLUDING ALL);CREATE SEQUENCE audit_plain_seq"
    )
    await setup.close()
    for name, statement in (("chained append", APPEND), ("plain insert", PLAIN)):
        await _drive(url, statement, count // 10, connections)  # warm up
        rate, p50 = await _drive(url, statement, count, connections)
        print(f"{name:15s} {rate:8.0f}/s  p50 {p50:6.2f} ms  ({connections} connections)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=4000)
    parser.add_argument("--connections", type=int, default=10)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as directory,
        fresh_database("postgres", Path(directory)) as url,
    ):
        asyncio.run(main(url, args.count, args.connections))
