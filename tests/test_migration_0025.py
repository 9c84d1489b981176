"""Migration 0025 on a database of the release before it: the referrals' patient names,
phones and e-mail addresses are sealed in batches under the key file's ring (the ring the
application reads), values sealed already are left alone, and running it again changes
nothing. Both backends."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine, text

from rehabref.crypto import seal
from rehabref.db import sync_url
from rehabref.instance_secret import load_key_ring
from rehabref.migrate import alembic_config, upgrade
from rehabref.referrals.sealing import FIRST_NAME, patient_identity
from tests.support.databases import fresh_database
from tests.support.key_file import key_file_only

ROWS = 1203  # more than two batches of 500


def _insert(conn, rows: list[dict[str, object]]) -> None:
    conn.execute(
        text(
            "INSERT INTO referrals (id, partner_id, environment, shape, status,"
            " patient_first_name, patient_last_name, patient_phone, patient_email,"
            " patient_city, created_at, updated_at) VALUES (:id, 'ptn_x', 'live', 'v1',"
            " 'received', :first, :last, :phone, :email, 'Enugu', :now, :now)"
        ),
        rows,
    )


def test_existing_patient_identifiers_are_sealed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key_file = key_file_only(monkeypatch, tmp_path / "keys" / "rehabref.key")
    ring = load_key_ring(None, key_file)
    now = datetime.now(UTC)
    with fresh_database(tmp_path) as url:
        command.downgrade(alembic_config(url), "0024")
        engine = create_engine(sync_url(url))
        already = seal(ring, FIRST_NAME, "Sealed")
        with engine.begin() as conn:
            _insert(
                conn,
                [
                    {
                        "id": f"ref_{n:05d}",
                        "first": f"Ngozi{n}",
                        "last": None if n % 2 else f"Obi{n}",
                        "phone": f"+234803{n:07d}",
                        "email": None if n % 3 else f"ngozi{n}@example.com",
                        "now": now,
                    }
                    for n in range(ROWS)
                ]
                + [
                    {  # a plain address that happens to look like a sealed value
                        "id": "ref_lookalike",
                        "first": "Sade",
                        "last": None,
                        "phone": None,
                        "email": "s1.sade@example.com",
                        "now": now,
                    },
                    {  # the row's only value, plain, yet looking sealed
                        "id": "ref_lookalike_only",
                        "first": "s1.k1.not-really-sealed",
                        "last": None,
                        "phone": None,
                        "email": None,
                        "now": now,
                    },
                    {
                        "id": "ref_sealed",
                        "first": already,
                        "last": None,
                        "phone": None,
                        "email": None,
                        "now": now,
                    },
                ],
            )

        upgrade(url)

        with engine.connect() as conn:
            rows = conn.execute(text("SELECT * FROM referrals ORDER BY id")).all()
        assert len(rows) == ROWS + 3
        plain = {"Ngozi7", "+2348030000007", "Obi8", "ngozi9@example.com"}
        for row in rows[:ROWS]:
            for column in ("patient_first_name", "patient_phone"):
                assert getattr(row, column).startswith("s1.k1."), (row.id, column)
            assert not plain & {row.patient_first_name, row.patient_phone}
        person = patient_identity(ring, rows[8])
        assert (person.first_name, person.last_name, person.phone, person.email) == (
            "Ngozi8",
            "Obi8",
            "+2348030000008",
            None,
        )
        assert patient_identity(ring, rows[9]).email == "ngozi9@example.com"
        lookalike, only_lookalike, sealed_before = rows[ROWS], rows[ROWS + 1], rows[ROWS + 2]
        assert lookalike.id == "ref_lookalike" and sealed_before.id == "ref_sealed"
        assert only_lookalike.patient_first_name != "s1.k1.not-really-sealed"
        assert patient_identity(ring, only_lookalike).first_name == "s1.k1.not-really-sealed"
        assert lookalike.patient_email != "s1.sade@example.com"
        assert patient_identity(ring, lookalike).email == "s1.sade@example.com"
        assert sealed_before.patient_first_name == already  # sealed before: left alone

        # Idempotent: again from 0024 (a run interrupted half-way), nothing is sealed twice.
        command.downgrade(alembic_config(url), "0024")
        upgrade(url)
        with engine.connect() as conn:
            again = conn.execute(text("SELECT * FROM referrals ORDER BY id")).all()
        engine.dispose()
    assert again == rows


def test_it_refuses_to_seal_under_a_key_made_up_on_the_spot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No REHABREF_SECRET_KEY and no key file where the application keeps it: rows to seal
    stop the migration instead of locking them under a new key nobody has."""
    key_file = key_file_only(monkeypatch, tmp_path / "elsewhere" / "rehabref.key")
    with fresh_database(tmp_path) as url:
        command.downgrade(alembic_config(url), "0024")
        engine = create_engine(sync_url(url))
        with engine.begin() as conn:
            _insert(
                conn,
                [
                    {
                        "id": "ref_1",
                        "first": "Ngozi",
                        "last": None,
                        "phone": None,
                        "email": None,
                        "now": datetime.now(UTC),
                    }
                ],
            )
        with pytest.raises(RuntimeError, match="no key was found"):
            upgrade(url)
        with engine.connect() as conn:
            first = conn.execute(text("SELECT patient_first_name FROM referrals")).scalar_one()
        engine.dispose()
    assert first == "Ngozi" and not key_file.exists()
