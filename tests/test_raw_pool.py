"""RawPool: bounded, LIFO reuse of asyncpg connections; broken or abandoned connections are
replaced, never handed out again, and no slot is lost to a cancelled waiter."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from rehabref.db import Database
from rehabref.raw_pool import PoolClosed, RawPool


@pytest.fixture
def connect(backend, database_url):
    if backend != "postgres":
        pytest.skip("raw connections are PostgreSQL only")
    db = Database(database_url)
    _, options = db.engine.sync_engine.dialect.create_connect_args(db.engine.sync_engine.url)

    async def open_one() -> asyncpg.Connection:
        return await asyncpg.connect(**options)

    return open_one


async def backend_pid(pool: RawPool) -> int:
    async with pool.connection() as conn:
        return int(await conn.fetchval("SELECT pg_backend_pid()"))


async def test_connections_are_reused_and_bounded(connect):
    pool = RawPool(connect, size=2)
    first = await backend_pid(pool)
    assert await backend_pid(pool) == first
    busy = 0
    most = 0

    async def work() -> None:
        nonlocal busy, most
        async with pool.connection() as conn:
            busy += 1
            most = max(most, busy)
            await conn.execute("SELECT pg_sleep(0.01)")
            busy -= 1

    await asyncio.gather(*(work() for _ in range(20)))
    assert most == 2 and pool.opened == 2
    await pool.close()


async def test_a_connection_left_in_a_transaction_is_not_reused(connect):
    pool = RawPool(connect, size=1)
    async with pool.connection() as conn:
        before = int(await conn.fetchval("SELECT pg_backend_pid()"))
        await conn.execute("BEGIN")
    assert await backend_pid(pool) != before
    assert pool.opened == 1
    await pool.close()


async def test_an_error_from_postgres_keeps_the_connection_other_failures_drop_it(connect):
    pool = RawPool(connect, size=1)
    pid = await backend_pid(pool)
    with pytest.raises(asyncpg.PostgresError):
        async with pool.connection() as conn:
            await conn.execute("SELECT 1/0")
    assert await backend_pid(pool) == pid

    async def cancelled_mid_query() -> None:
        async with pool.connection() as conn:
            await conn.execute("SELECT pg_sleep(5)")

    task = asyncio.create_task(cancelled_mid_query())
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await backend_pid(pool) != pid
    assert pool.opened == 1
    await pool.close()


async def test_a_connection_closed_by_the_server_is_replaced(connect):
    pool = RawPool(connect, size=1)
    pid = await backend_pid(pool)
    admin = await connect()
    await admin.execute("SELECT pg_terminate_backend($1)", pid)
    await admin.close()
    await asyncio.sleep(0.2)
    assert await backend_pid(pool) != pid
    await pool.close()


async def test_a_cancelled_waiter_does_not_lose_the_slot(connect):
    pool = RawPool(connect, size=1)
    held = pool.connection()
    await held.__aenter__()
    waiter = asyncio.create_task(backend_pid(pool))
    await asyncio.sleep(0.05)
    waiter.cancel()
    await held.__aexit__(None, None, None)
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert await asyncio.wait_for(backend_pid(pool), 5)
    assert pool.opened == 1
    await pool.close()


async def test_a_closed_pool_refuses_new_checkouts(connect):
    pool = RawPool(connect, size=1)
    await backend_pid(pool)
    await pool.close()
    assert pool.opened == 0
    with pytest.raises(PoolClosed):
        await backend_pid(pool)


async def test_hot_path_connections_use_generic_plans(backend, database_url):
    if backend != "postgres":
        pytest.skip("raw connections are PostgreSQL only")
    db = Database(database_url)
    try:
        async with db.fast_read() as conn:
            mode = await conn.driver.fetchval("SHOW plan_cache_mode")  # type: ignore[union-attr]
    finally:
        await db.dispose()
    assert mode == "force_generic_plan"
