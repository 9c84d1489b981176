"""fastsql: compiled Core statements on the raw driver, and batched INSERTs, on both databases."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import bindparam, insert, select
from sqlalchemy.exc import IntegrityError

from rehabref.db import Database, table
from rehabref.fastsql import (
    RawConnection,
    SingleStatementViolation,
    Statement,
    batched_inserts,
    batching,
    execute,
    execute_many,
    fetch_all,
    fetch_one,
    flush,
)
from rehabref.ids import new_id
from rehabref.instance_secret import InstanceSetting
from rehabref.result_rows import Record
from rehabref.tables.partners import Partner

settings = table(InstanceSetting)
partners = table(Partner)
INSERT_SETTING = Statement(insert(settings))
INSERT_PARTNER = Statement(insert(partners))
SETTING = Statement(select(settings).where(settings.c.name == bindparam("name")))
PARTNER = Statement(select(partners).where(partners.c.id == bindparam("id")))


def partner_row(name: str) -> dict[str, object]:
    return {
        "id": new_id("ptn"),
        "name": name,
        "contract": "v1",
        "commission_bps": 250,
        "commission_fixed_minor": None,
        "show_payments": True,
        "created_at": datetime.now(UTC),
    }


@pytest.fixture
async def db(database_url):
    database = Database(database_url, pool_size=2)
    yield database
    await database.dispose()


async def test_rows_come_back_with_attribute_access_and_typed_values(db):
    row = partner_row("Typed Clinic")
    async with db.write() as conn:
        await execute(conn, INSERT_PARTNER, row)
    async with db.read() as conn:
        found = await fetch_one(conn, PARTNER, {"id": row["id"]})
    assert found is not None
    assert (found.name, found.commission_bps, found.show_payments) == ("Typed Clinic", 250, True)
    assert found.created_at.replace(tzinfo=UTC) == row["created_at"]


async def test_rows_of_one_query_share_a_record_type_with_every_column_readable(db):
    rows = [partner_row("First Typed Row"), partner_row("Second Typed Row")]
    async with db.write() as conn:
        await execute_many(conn, INSERT_PARTNER, rows)
    everyone = Statement(select(partners).where(partners.c.name.like("% Typed Row")))
    async with db.read() as conn:
        found = await fetch_all(conn, everyone, {})
    assert len(found) == 2
    assert type(found[0]) is type(found[1])
    for record in found:
        assert isinstance(record, Record)
        # Every column by attribute and by key, the same value; the row is a plain dict too.
        assert {name: getattr(record, name) for name in record} == dict(record)
    assert {record.name for record in found} == {"First Typed Row", "Second Typed Row"}


async def test_a_failed_transaction_leaves_nothing_behind(db):
    row = partner_row("Rolled Back")
    with pytest.raises(RuntimeError):
        async with db.write() as conn:
            await execute(conn, INSERT_PARTNER, row)
            raise RuntimeError("abort")
    async with db.read() as conn:
        assert await fetch_one(conn, PARTNER, {"id": row["id"]}) is None


async def test_batched_inserts_of_several_tables_all_arrive(db):
    rows = [partner_row(f"Batch {n}") for n in range(3)]
    name = f"batch-{new_id('x')}"
    async with db.write() as conn, batched_inserts(conn):
        await execute_many(conn, INSERT_PARTNER, rows)
        await execute(conn, INSERT_SETTING, {"name": name, "value": "v"})
    async with db.read() as conn:
        for row in rows:
            found = await fetch_one(conn, PARTNER, {"id": row["id"]})
            assert found is not None and found.name == row["name"]
        setting = await fetch_one(conn, SETTING, {"name": name})
        assert setting is not None and setting.value == "v"


async def test_a_read_of_a_queued_table_sees_the_queued_rows(db):
    row = partner_row("Read Your Writes")
    async with db.write() as conn, batched_inserts(conn):
        await execute(conn, INSERT_PARTNER, row)
        found = await fetch_one(conn, PARTNER, {"id": row["id"]})
        assert found is not None


async def test_an_error_inside_a_batch_sends_nothing_and_ends_the_batch(db):
    row = partner_row("Never Sent")
    with pytest.raises(RuntimeError):
        async with db.autocommit() as conn, batched_inserts(conn, single_statement=True):
            await execute(conn, INSERT_PARTNER, row)
            raise RuntimeError("abort before the statement is sent")
    assert not batching(conn)
    async with db.fast_read() as conn:
        assert await fetch_one(conn, PARTNER, {"id": row["id"]}) is None


async def test_a_nested_batch_joins_the_outer_one(db, backend):
    outer, inner = partner_row("Outer"), partner_row("Inner")
    async with db.write() as conn, batched_inserts(conn):
        await execute(conn, INSERT_PARTNER, outer)
        async with batched_inserts(conn):
            await execute(conn, INSERT_PARTNER, inner)
        # Leaving the inner block sent nothing: both rows still wait in the outer batch.
        assert batching(conn) == (backend == "postgres")
    async with db.read() as conn:
        for row in (outer, inner):
            assert await fetch_one(conn, PARTNER, {"id": row["id"]}) is not None


async def test_a_unique_violation_in_a_batch_is_an_integrity_error_and_rolls_back(db):
    first = partner_row("First")
    duplicate = {**partner_row("Second"), "id": first["id"]}
    name = f"lost-{new_id('x')}"
    with pytest.raises(IntegrityError):
        async with db.write() as conn, batched_inserts(conn):
            await execute(conn, INSERT_SETTING, {"name": name, "value": "v"})
            await execute_many(conn, INSERT_PARTNER, [first, duplicate])
    async with db.read() as conn:
        assert await fetch_one(conn, PARTNER, {"id": first["id"]}) is None
        assert await fetch_one(conn, SETTING, {"name": name}) is None


async def test_flush_sends_the_queue_early_and_is_idempotent(db):
    row = partner_row("Flushed")
    async with db.write() as conn, batched_inserts(conn):
        await execute(conn, INSERT_PARTNER, row)
        await flush(conn)
        await flush(conn)
    async with db.read() as conn:
        rows = await fetch_all(conn, PARTNER, {"id": row["id"]})
    assert [found.name for found in rows] == ["Flushed"]


async def test_a_single_statement_batch_commits_every_row_at_once(db):
    rows = [partner_row(f"Single {n}") for n in range(2)]
    name = f"single-{new_id('x')}"
    async with db.autocommit() as conn, batched_inserts(conn, single_statement=True):
        await execute_many(conn, INSERT_PARTNER, rows)
        # Reads of tables with nothing queued may run in between.
        assert await fetch_one(conn, SETTING, {"name": "no-such-setting"}) is None
        await execute(conn, INSERT_SETTING, {"name": name, "value": "v"})
    async with db.fast_read() as conn:
        for row in rows:
            assert await fetch_one(conn, PARTNER, {"id": row["id"]}) is not None
        assert await fetch_one(conn, SETTING, {"name": name}) is not None


async def test_a_failing_single_statement_batch_leaves_nothing(db):
    first = partner_row("Atomic")
    duplicate = {**partner_row("Atomic Twin"), "id": first["id"]}
    name = f"atomic-{new_id('x')}"
    with pytest.raises(IntegrityError):
        async with db.autocommit() as conn, batched_inserts(conn, single_statement=True):
            await execute(conn, INSERT_SETTING, {"name": name, "value": "v"})
            await execute_many(conn, INSERT_PARTNER, [first, duplicate])
    async with db.read() as conn:
        assert await fetch_one(conn, PARTNER, {"id": first["id"]}) is None
        assert await fetch_one(conn, SETTING, {"name": name}) is None


async def test_work_one_statement_cannot_do_is_refused_before_anything_is_sent(db, backend):
    if backend != "postgres":
        pytest.skip("SQLite runs the block as an ordinary transaction")
    row = partner_row("Refused")
    update = Statement(
        settings.update().where(settings.c.name == bindparam("match")).values(value="x")
    )
    attempts = [
        lambda conn: flush(conn),  # an early send
        lambda conn: fetch_one(conn, PARTNER, {"id": row["id"]}),  # a read of a queued table
        lambda conn: execute(conn, update, {"match": "nothing"}),  # not an INSERT
    ]
    for attempt in attempts:
        with pytest.raises(SingleStatementViolation):
            async with db.autocommit() as conn, batched_inserts(conn, single_statement=True):
                await execute(conn, INSERT_PARTNER, row)
                await attempt(conn)
    async with db.read() as conn:
        assert await fetch_one(conn, PARTNER, {"id": row["id"]}) is None


async def test_raw_connections_run_reads_without_sqlalchemy(db, backend):
    row = partner_row("Raw Read")
    async with db.write() as conn:
        await execute(conn, INSERT_PARTNER, row)
    async with db.fast_read() as conn:
        if backend == "postgres":
            assert isinstance(conn, RawConnection)
        found = await fetch_one(conn, PARTNER, {"id": row["id"]})
    assert found is not None and found.show_payments is True
