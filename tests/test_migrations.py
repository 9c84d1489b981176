"""Migrations and models agree: after `upgrade heads` on a fresh database, Alembic's
autogenerate comparison finds nothing to change (run once per backend, like the suite)."""

from __future__ import annotations

from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, inspect, text

from rehabref.db import sync_url
from rehabref.migrate import alembic_config, missing_revisions, upgrade
from rehabref.tables import metadata


def differences(database_url: str, target: MetaData = metadata) -> list[Any]:
    engine = create_engine(sync_url(database_url))
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(
                conn, opts={"compare_type": True, "compare_server_default": False}
            )
            return list(compare_metadata(context, target))
    finally:
        engine.dispose()


def test_models_match_the_migrated_schema(database_url):
    found = differences(database_url)
    assert found == [], "models and migrations differ:\n" + "\n".join(map(repr, found))


def test_the_comparison_notices_a_missing_table_and_column(database_url):
    changed = MetaData()
    for table in metadata.tables.values():
        table.to_metadata(changed)
    Table("not_migrated", changed, Column("id", Integer, primary_key=True))
    changed.tables["referrals"].append_column(Column("not_migrated", String(10)))
    kinds = {diff[0] for diff in differences(database_url, changed) if isinstance(diff, tuple)}
    assert {"add_table", "add_column"} <= kinds


def test_every_head_is_applied(database_url):
    heads = set(ScriptDirectory.from_config(alembic_config(database_url)).get_heads())
    engine = create_engine(sync_url(database_url))
    try:
        with engine.connect() as conn:
            applied = set(MigrationContext.configure(conn).get_current_heads())
    finally:
        engine.dispose()
    assert applied == heads


def test_every_model_table_exists(database_url):
    engine = create_engine(sync_url(database_url))
    try:
        existing = set(inspect(engine).get_table_names())
    finally:
        engine.dispose()
    assert set(metadata.tables) <= existing


def test_revisions_form_one_tree_rooted_at_the_foundation(database_url):
    scripts = ScriptDirectory.from_config(alembic_config(database_url))
    bases = scripts.get_bases()
    assert bases == ["0001"]
    for revision in scripts.walk_revisions():
        assert revision.doc, f"revision {revision.revision} has no description"


@pytest.mark.parametrize(
    ("index", "condition"),
    [
        (
            "ix_referrals_partner_reference",
            "partner_id = 'p' AND environment = 'test' AND partner_reference = 'r'",
        ),
        ("ix_referrals_assigned_physio_id", "assigned_physio_id IN ('a', 'b')"),
        ("ix_referrals_link_id", "link_id = 'lnk'"),
    ],
)
def test_partial_indexes_still_serve_their_lookups(backend, database_url, index, condition):
    if backend != "postgres":
        pytest.skip("SQLite keeps full indexes")
    engine = create_engine(sync_url(database_url))
    try:
        with engine.connect() as conn:
            predicate = conn.execute(
                text("SELECT indexdef FROM pg_indexes WHERE indexname = :i"), {"i": index}
            ).scalar_one()
            assert predicate.endswith("IS NOT NULL)")
            conn.execute(text("SET enable_seqscan = off"))
            plan = "\n".join(
                conn.execute(text(f"EXPLAIN SELECT id FROM referrals WHERE {condition}")).scalars()
            )
    finally:
        engine.dispose()
    assert index in plan, plan


def test_missing_revisions_tells_serve_whether_the_schema_is_behind(database_url, tmp_path):
    assert missing_revisions(database_url) == []  # the suite's database is at every head
    every = [
        r.revision
        for r in ScriptDirectory.from_config(alembic_config(database_url)).walk_revisions()
    ]
    # The rules do not depend on the backend; a scratch SQLite file shows each case.
    scratch = f"sqlite:///{tmp_path / 'scratch.db'}"
    assert sorted(missing_revisions(scratch) or []) == sorted(every)  # nothing applied
    upgrade(scratch, "0002")
    behind = missing_revisions(scratch) or []
    assert "0001" not in behind and "0002" not in behind
    assert sorted(behind) == sorted(set(every) - {"0001", "0002"})
    upgrade(scratch)
    assert missing_revisions(scratch) == []
    engine = create_engine(sync_url(scratch))
    try:
        with engine.begin() as conn:  # a newer release migrated it: older code may still run
            conn.execute(text("UPDATE alembic_version SET version_num = 'from_the_future'"))
    finally:
        engine.dispose()
    assert missing_revisions(scratch) == []
    assert missing_revisions("postgresql://postgres@127.0.0.1:1/unreachable") is None


def _partner_keys(database_url: str) -> dict[str, bool]:
    """For each table with a ``partner_id`` column: whether it has a foreign key to partners."""
    engine = create_engine(sync_url(database_url))
    try:
        inspector = inspect(engine)
        return {
            table: any(
                fk["referred_table"] == "partners" for fk in inspector.get_foreign_keys(table)
            )
            for table in inspector.get_table_names()
            if any(column["name"] == "partner_id" for column in inspector.get_columns(table))
        }
    finally:
        engine.dispose()


def test_hot_create_tables_have_no_partner_key_and_the_rest_keep_theirs(database_url):
    keys = _partner_keys(database_url)
    assert keys.pop("referrals") is False
    assert keys.pop("events") is False
    # Idempotency records never had one (their scope may name any partner).
    keys.pop("idempotency_records")
    assert keys and all(keys.values()), keys


def test_dropping_the_partner_keys_downgrades_and_upgrades_again(tmp_path):
    scratch = f"sqlite:///{tmp_path / 'scratch.db'}"
    upgrade(scratch)
    command.downgrade(alembic_config(scratch), "0009")
    restored = _partner_keys(scratch)
    assert restored["referrals"] and restored["events"]
    upgrade(scratch)
    assert differences(scratch) == []
