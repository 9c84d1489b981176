"""fastsql: compiled Core statements on a raw connection, SQLAlchemy otherwise; both databases."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import bindparam, insert, select
from sqlalchemy.exc import IntegrityError

from rehabref.db import Database, table
from rehabref.fastsql import (
    RawConnection,
    Statement,
    execute,
    execute_many,
    fetch_all,
    fetch_one,
)
from rehabref.ids import new_id
from rehabref.result_rows import Record
from rehabref.tables.partners import Partner

partners = table(Partner)
INSERT_PARTNER = Statement(insert(partners))
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


async def test_a_unique_violation_is_an_integrity_error_on_either_connection(db):
    row = partner_row("Twice")
    async with db.write() as conn:
        await execute(conn, INSERT_PARTNER, row)
    with pytest.raises(IntegrityError):
        async with db.write() as conn:
            await execute(conn, INSERT_PARTNER, row)
    with pytest.raises(IntegrityError):
        async with db.autocommit() as raw:
            await execute(raw, INSERT_PARTNER, row)


async def test_raw_connections_run_reads_without_sqlalchemy(db, backend):
    row = partner_row("Raw Read")
    async with db.write() as conn:
        await execute(conn, INSERT_PARTNER, row)
    async with db.fast_read() as conn:
        if backend == "postgres":
            assert isinstance(conn, RawConnection)
        found = await fetch_one(conn, PARTNER, {"id": row["id"]})
    assert found is not None and found.show_payments is True
