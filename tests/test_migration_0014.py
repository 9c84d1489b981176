"""Migration 0014 on a database of the release before it: the instance secret kept in the
database moves to the key file (and out of the database), existing referrals get their blind
indexes, and what the old secret signed still verifies. Both backends."""

from __future__ import annotations

import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine, inspect, text

from rehabref.crypto import blind_index
from rehabref.db import sync_url
from rehabref.instance_secret import SecretBox, load_key_ring
from rehabref.migrate import alembic_config, upgrade
from tests.support.databases import fresh_database
from tests.support.key_file import key_file_only

LEGACY = "Zt3" * 21 + "x"  # the form earlier releases generated: 64 URL-safe characters


def test_the_stored_secret_moves_to_the_key_file_and_referrals_are_indexed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key_file = key_file_only(monkeypatch, tmp_path / "keys" / "rehabref.key")
    with fresh_database(tmp_path) as url:
        command.downgrade(alembic_config(url), "0013")
        engine = create_engine(sync_url(url))
        now = datetime.now(UTC)
        with engine.begin() as conn:
            conn.execute(
                text("INSERT INTO instance_settings (name, value) VALUES ('secret_key', :v)"),
                {"v": LEGACY},
            )
            conn.execute(
                text(
                    "INSERT INTO referrals (id, partner_id, environment, shape, status,"
                    " patient_first_name, patient_phone, patient_email, patient_city,"
                    " created_at, updated_at) VALUES ('ref_old', 'ptn_x', 'live', 'v1',"
                    " 'received', 'Ngozi', '+2348030000001', 'ngozi@example.com', 'Enugu',"
                    " :now, :now)"
                ),
                {"now": now},
            )
        assert not key_file.exists()

        upgrade(url)

        assert "instance_settings" not in inspect(engine).get_table_names()
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        ring = load_key_ring(None, key_file)
        # The old secret only verifies (every pre-upgrade database copy holds it); a new key
        # signs.
        assert [key_id for key_id, _ in ring.keys] == ["k0", "k1"]
        assert ring.keys[0] == ("k0", LEGACY.encode())
        assert SecretBox(ring).verify("ast_x.1", SecretBox(LEGACY).sign("ast_x.1"))
        assert SecretBox(ring).sign("ast_x.1") != SecretBox(LEGACY).sign("ast_x.1")
        assert not SecretBox(LEGACY).verify("ast_x.1", SecretBox(ring).sign("ast_x.1"))
        with engine.connect() as conn:
            phone_index, email_index = conn.execute(
                text(
                    "SELECT patient_phone_index, patient_email_index FROM referrals"
                    " WHERE id = 'ref_old'"
                )
            ).one()
        engine.dispose()
    assert phone_index == blind_index(ring, "phone", "+2348030000001")
    assert email_index == blind_index(ring, "email", "ngozi@example.com")
