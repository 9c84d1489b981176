"""Migration 0032 on a registry imported before it: members' names and phones are sealed in
batches under the key file's ring, values sealed already are left alone, and running it
again changes nothing. Both backends."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine, text

from rehabref.crypto import new_key, parse_key_ring, seal
from rehabref.db import sync_url
from rehabref.eligibility.member_sealing import NAME, opened_name, opened_phone
from rehabref.instance_secret import load_key_ring
from rehabref.migrate import alembic_config, upgrade
from tests.support.databases import fresh_database
from tests.support.key_file import key_file_only

ROWS = 1102  # more than two batches of 500


def test_existing_members_are_sealed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key_file = key_file_only(monkeypatch, tmp_path / "keys" / "rehabref.key")
    ring = load_key_ring(None, key_file)
    now = datetime.now(UTC)
    already = seal(ring, NAME, "Sealed Before")
    with fresh_database(tmp_path) as url:
        command.downgrade(alembic_config(url), "0031")
        engine = create_engine(sync_url(url))
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO hmo_members (id, hmo_code, policy_number, name, phone,"
                    " plan_tier, policy_status, expiry_date, physiotherapy_covered,"
                    " post_surgical_covered, pre_auth_required, annual_session_limit,"
                    " sessions_used, co_pay_kobo, imported_at, updated_at) VALUES (:id,"
                    " 'AXA_MANSARD', :policy, :name, :phone, 'Gold', 'active', :expiry, true,"
                    " true, false, 10, 0, 0, :now, :now)"
                ),
                [
                    {
                        "id": f"mbr_{n:05d}",
                        "policy": f"AXA-{n:05d}",
                        "name": already if n == 0 else f"Amina Bello {n}",
                        "phone": f"+234803{n:07d}",
                        "expiry": date(2099, 12, 31),
                        "now": now,
                    }
                    for n in range(ROWS)
                ],
            )

        upgrade(url)

        with engine.connect() as conn:
            rows = conn.execute(text("SELECT * FROM hmo_members ORDER BY id")).all()
        assert len(rows) == ROWS
        for row in rows:
            assert row.name.startswith("s1.k1.") and row.phone.startswith("s1.k1."), row.id
        assert rows[0].name == already  # sealed before: left alone
        assert opened_name(ring, rows[7].name) == "Amina Bello 7"
        assert opened_phone(ring, rows[7].phone) == "+2348030000007"

        # Idempotent: again from 0031 (a run interrupted half-way), nothing is sealed twice.
        command.downgrade(alembic_config(url), "0031")
        upgrade(url)
        with engine.connect() as conn:
            again = conn.execute(text("SELECT * FROM hmo_members ORDER BY id")).all()
        engine.dispose()
    assert again == rows


def test_a_value_sealed_under_a_key_missing_from_the_ring_stops_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sealing it again would bury it under a second layer that readers open into
    ciphertext: the migration names the missing key instead."""
    key_file = key_file_only(monkeypatch, tmp_path / "keys" / "rehabref.key")
    load_key_ring(None, key_file)
    elsewhere = parse_key_ring(f"k9:{new_key()}")
    with fresh_database(tmp_path) as url:
        command.downgrade(alembic_config(url), "0031")
        engine = create_engine(sync_url(url))
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO hmo_members (id, hmo_code, policy_number, name, phone,"
                    " plan_tier, policy_status, expiry_date, physiotherapy_covered,"
                    " post_surgical_covered, pre_auth_required, annual_session_limit,"
                    " sessions_used, co_pay_kobo, imported_at, updated_at) VALUES ('mbr_1',"
                    " 'AXA_MANSARD', 'AXA-1', :name, '+2348030000001', 'Gold', 'active',"
                    " :expiry, true, true, false, 10, 0, 0, :now, :now)"
                ),
                {
                    "name": seal(elsewhere, NAME, "Amina Bello"),
                    "expiry": date(2099, 12, 31),
                    "now": datetime.now(UTC),
                },
            )
        with pytest.raises(RuntimeError, match="'k9', which is not in the key ring"):
            upgrade(url)
        engine.dispose()
