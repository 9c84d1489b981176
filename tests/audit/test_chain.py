"""The audit trail's hash chain: appends, concurrency, tampering, append-only (both databases)."""

from __future__ import annotations

import asyncio
import itertools
import subprocess
import sys
import threading
from datetime import UTC, datetime

import pytest
from sqlalchemy import create_engine, text

from rehabref.audit.chain import GENESIS, Entry, link_hash
from rehabref.audit.trail import entry, record, record_read
from rehabref.audit.verify import verify_chain
from rehabref.db import Database, sync_url
from rehabref.tables.audit import CHAINS
from tests.support.databases import fresh_database
from tests.support.partners import TEST_SECRET_KEY
from tests.support.server import isolated_environ


async def _append(url: str, count: int, *, actor: str = "operator:opr_test") -> None:
    # One connection: on PostgreSQL all of these appends go to that connection's chain.
    db = Database(url, pool_size=1)
    try:
        for n in range(count):
            async with db.write() as conn:
                await record(conn, entry(actor, "referral.read", referral_id=f"ref_{n}"))
    finally:
        await db.dispose()


async def _verify(url: str):
    db = Database(url, pool_size=1)
    try:
        async with db.read() as conn:
            return await verify_chain(conn)
    finally:
        await db.dispose()


def _cli_verify(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rehabref.cli", "audit", "verify", *args],
        env={
            **isolated_environ(),
            "REHABREF_DATABASE_URL": url,
            "REHABREF_SECRET_KEY": TEST_SECRET_KEY,
        },
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_hash_is_sha256_of_position_fields_and_previous_hash():
    item = Entry(
        id="aud_1",
        at=datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC),
        actor_kind="operator",
        actor_id="opr_1",
        action="referral.read",
        referral_id="ref_1",
        subject=None,
        request_id="req_1",
    )
    assert item.canonical() == (
        '["aud_1",1767323045678901,"operator","opr_1","referral.read","ref_1",null,"req_1"]'
    )
    first = link_hash(1, 1, item.canonical(), GENESIS)
    assert first != link_hash(1, 2, item.canonical(), GENESIS)
    assert first != link_hash(2, 1, item.canonical(), GENESIS)
    assert first != link_hash(1, 1, item.canonical().replace("ref_1", "ref_2"), GENESIS)
    assert len(first) == 64


def test_appends_chain_and_verify(database_url, sql):
    asyncio.run(_append(database_url, 5))
    verdict = asyncio.run(_verify(database_url))
    assert verdict.intact, verdict
    with sql.connect() as conn:
        rows = conn.execute(
            text("SELECT chain, seq, prev_hash, hash FROM audit_events ORDER BY chain, seq")
        ).all()
        heads = {
            head.id: head for head in conn.execute(text("SELECT id, seq, hash FROM audit_chain"))
        }
    assert len(heads) == CHAINS
    for chain, links in itertools.groupby(rows, key=lambda row: row.chain):
        chained = list(links)
        assert [row.seq for row in chained] == list(range(1, len(chained) + 1))
        assert chained[0].prev_hash == GENESIS
        for before, after in itertools.pairwise(chained):
            assert after.prev_hash == before.hash
        assert (heads[chain].seq, heads[chain].hash) == (chained[-1].seq, chained[-1].hash)
    assert verdict.checked == len(rows)


def test_a_read_records_on_its_own(database_url, sql):
    async def work() -> None:
        db = Database(database_url, pool_size=1)
        try:
            await record_read(db, entry("partner:ptn_1:key_1", "referral.read", referral_id="r9"))
        finally:
            await db.dispose()

    asyncio.run(work())
    with sql.connect() as conn:
        row = conn.execute(
            text("SELECT actor_kind, actor_id FROM audit_events WHERE referral_id = 'r9'")
        ).one()
    assert tuple(row) == ("partner", "ptn_1:key_1")


def test_a_rolled_back_change_leaves_no_record_and_no_gap(database_url, sql):
    async def work() -> None:
        db = Database(database_url, pool_size=1)
        try:
            with pytest.raises(RuntimeError):
                async with db.write() as conn:
                    await record(conn, entry("operator:opr_x", "referral.moved", referral_id="rb"))
                    raise RuntimeError("the change failed")
        finally:
            await db.dispose()

    asyncio.run(work())
    asyncio.run(_append(database_url, 1))
    with sql.connect() as conn:
        assert (
            conn.execute(
                text("SELECT count(*) FROM audit_events WHERE referral_id = 'rb'")
            ).scalar()
            == 0
        )
    assert asyncio.run(_verify(database_url)).intact


def test_many_threads_appending_at_once_keep_one_chain(database_url, backend, sql):
    threads_count, each = (8, 25) if backend == "postgres" else (3, 10)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(_append(database_url, each, actor="operator:opr_threads"))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(threads_count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with sql.connect() as conn:
        written = conn.execute(
            text("SELECT count(*) FROM audit_events WHERE actor_id = 'opr_threads'")
        ).scalar()
    assert written == threads_count * each
    verdict = asyncio.run(_verify(database_url))
    assert verdict.intact, verdict


@pytest.fixture
def own_database(tmp_path, backend):
    with fresh_database(tmp_path, backend) as url:
        yield url


def _tamper(url: str, statement: str) -> None:
    engine = create_engine(sync_url(url))
    try:
        with engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                # The trigger refuses edits; a superuser can switch it off, and verify still
                # sees the change.
                conn.execute(text("ALTER TABLE audit_events DISABLE TRIGGER USER"))
            conn.execute(text(statement))
    finally:
        engine.dispose()


def test_verify_names_the_first_altered_record(own_database):
    asyncio.run(_append(own_database, 4))
    intact = _cli_verify(own_database)
    assert intact.returncode == 0, intact.stderr
    assert "intact: 4 records" in intact.stdout
    _tamper(own_database, "UPDATE audit_events SET referral_id = 'ref_other' WHERE seq = 3")
    broken = _cli_verify(own_database)
    assert broken.returncode == 1
    assert "record 3" in broken.stderr and "hash does not match" in broken.stderr


def test_verify_notices_a_deleted_record(own_database):
    asyncio.run(_append(own_database, 3))
    _tamper(own_database, "DELETE FROM audit_events WHERE seq = 2")
    broken = _cli_verify(own_database)
    assert broken.returncode == 1
    assert "record 2 is missing" in broken.stderr


def test_verify_notices_the_last_record_removed(own_database):
    asyncio.run(_append(own_database, 3))
    _tamper(own_database, "DELETE FROM audit_events WHERE seq = 3")
    broken = _cli_verify(own_database)
    assert broken.returncode == 1
    assert "chain head" in broken.stderr


def test_an_anchor_outside_the_database_notices_a_rewound_chain(own_database, tmp_path):
    """The chain is not keyed: whoever owns the database can cut the newest records and wind
    the head back, and the walk alone finds nothing. The heads kept from the last run do."""
    anchor = tmp_path / "audit-heads.json"
    asyncio.run(_append(own_database, 3))
    first = _cli_verify(own_database, "--anchor", str(anchor))
    assert first.returncode == 0, first.stderr
    assert anchor.exists()
    _tamper(own_database, "DELETE FROM audit_events WHERE seq = 3")
    _tamper(
        own_database,
        "UPDATE audit_chain SET seq = 2, prev_hash = (SELECT prev_hash FROM audit_events e"
        " WHERE e.chain = audit_chain.id AND e.seq = 2), hash = (SELECT hash FROM audit_events e"
        " WHERE e.chain = audit_chain.id AND e.seq = 2)"
        " WHERE id = (SELECT chain FROM audit_events WHERE seq = 2)",
    )
    assert _cli_verify(own_database).returncode == 0  # the walk alone is fooled
    broken = _cli_verify(own_database, "--anchor", str(anchor))
    assert broken.returncode == 1
    assert "record 3 no longer has the hash anchored" in broken.stderr


def test_postgres_refuses_updates_and_deletes(database_url, backend, sql):
    if backend != "postgres":
        pytest.skip("the append-only trigger is PostgreSQL's")
    asyncio.run(_append(database_url, 1))
    for statement in (
        "UPDATE audit_events SET action = 'x' WHERE seq = 1",
        "DELETE FROM audit_events WHERE seq = 1",
        "TRUNCATE audit_events",
    ):
        with pytest.raises(Exception, match="append-only"), sql.begin() as conn:
            conn.execute(text(statement))
