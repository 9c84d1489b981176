"""Migration 0030 on a database of the release before it: session notes and cancel reasons,
assessment answers (JSON become sealed JSON text), transition reasons, contact-task notes
and appointment change reasons are sealed in batches under the key file's ring (the ring the
application reads); values sealed already are left alone, and running it again changes
nothing. Both backends."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, text

from rehabref.care.sealing import (
    SESSION_NOTES,
    assessment_detail,
    change_reason,
    session_notes,
)
from rehabref.crypto import seal
from rehabref.db import sync_url
from rehabref.instance_secret import load_key_ring
from rehabref.migrate import alembic_config, upgrade
from rehabref.referrals.coordinator_notes import task_note, transition_reason
from tests.support.databases import fresh_database
from tests.support.key_file import key_file_only

ROWS = 1203  # more than two batches of 500


def _before(url: str) -> str:
    """The revision 0030 follows (parallel migrations are chained when merged)."""
    revision = ScriptDirectory.from_config(alembic_config(url)).get_revision("0030")
    assert revision is not None and isinstance(revision.down_revision, str)
    return revision.down_revision


def _table(name: str, *columns: str, json: tuple[str, ...] = ()) -> sa.TableClause:
    typed = [sa.column(column, sa.JSON()) for column in json]
    return sa.table(name, *(sa.column(c) for c in columns), *typed)


def _seed(conn: sa.Connection, sealed_before: str) -> None:
    """A partner, a physiotherapist and one referral, then the rows holding free text."""
    now = datetime.now(UTC)
    conn.execute(
        text(
            "INSERT INTO partners (id, name, contract, show_payments, created_at)"
            " VALUES ('ptn_x', 'Clinic', 'g', false, :now)"
        ),
        {"now": now},
    )
    conn.execute(
        _table(
            "physiotherapists",
            "id",
            "name",
            "environment",
            "license_number",
            "rating",
            "phone",
            "city",
            "city_key",
            "weekly_capacity",
            "active",
            "created_at",
            "updated_at",
            json=("specializations", "areas", "modalities"),
        )
        .insert()
        .values(
            id="phy_x",
            specializations=["sports"],
            areas=[],
            modalities=["home_visit"],
            name="Tunde",
            environment="live",
            license_number="L1",
            rating=4.5,
            phone="+2348030000000",
            city="Enugu",
            city_key="enugu",
            weekly_capacity=10,
            active=True,
            created_at=now,
            updated_at=now,
        )
    )
    conn.execute(
        text(
            "INSERT INTO referrals (id, partner_id, environment, shape, status,"
            " patient_first_name, patient_city, created_at, updated_at) VALUES ('ref_x',"
            " 'ptn_x', 'live', 'g', 'booked', 'Ngozi', 'Enugu', :now, :now)"
        ),
        {"now": now},
    )
    sessions = _table(
        "care_sessions",
        "id",
        "referral_id",
        "partner_id",
        "environment",
        "physio_id",
        "session_number",
        "session_type",
        "modality",
        "status",
        "scheduled_at",
        "notes_summary",
        "cancel_reason",
        "created_by",
        "updated_by",
        "created_at",
        "updated_at",
    )
    base = {
        "referral_id": "ref_x",
        "partner_id": "ptn_x",
        "environment": "live",
        "physio_id": "phy_x",
        "session_type": "Visit",
        "modality": "home_visit",
        "status": "completed",
        "scheduled_at": now,
        "created_by": "t",
        "updated_by": "t",
        "created_at": now,
        "updated_at": now,
    }
    rows: list[dict[str, Any]] = [
        base
        | {
            "id": f"ses_{n:05d}",
            "session_number": n + 1,
            "notes_summary": f"Knee flexion {n} degrees",
            "cancel_reason": None if n % 2 else f"Patient in hospital {n}",
        }
        for n in range(ROWS)
    ]
    rows.append(  # only a reason that happens to look like a sealed value
        base
        | {
            "id": "ses_lookalike",
            "session_number": ROWS + 1,
            "notes_summary": None,
            "cancel_reason": "s1. patient travelled",
        }
    )
    rows.append(
        base
        | {
            "id": "ses_sealed",
            "session_number": ROWS + 2,
            "notes_summary": sealed_before,
            "cancel_reason": None,
        }
    )
    conn.execute(sessions.insert(), rows)
    conn.execute(
        _table(
            "assessments",
            "id",
            "referral_id",
            "scale",
            "score",
            "recorded_at",
            "created_by",
            "created_at",
            json=("detail",),
        ).insert(),
        [
            {
                "id": "asm_1",
                "referral_id": "ref_x",
                "scale": "psfs",
                "score": 4.0,
                "detail": {"tasks": [{"activity": "Climbing stairs to my flat", "score": 4}]},
                "recorded_at": now,
                "created_by": "t",
                "created_at": now,
            },
            {
                "id": "asm_2",
                "referral_id": "ref_x",
                "scale": "nprs",
                "score": 6.0,
                "detail": {},
                "recorded_at": now,
                "created_by": "t",
                "created_at": now,
            },
        ],
    )
    conn.execute(
        _table(
            "referral_transitions",
            "id",
            "referral_id",
            "from_status",
            "to_status",
            "actor",
            "reason",
            "created_at",
        ).insert(),
        [
            {
                "id": "trn_1",
                "referral_id": "ref_x",
                "from_status": None,
                "to_status": "received",
                "actor": "t",
                "reason": "referral created",
                "created_at": now,
            },
            {
                "id": "trn_2",
                "referral_id": "ref_x",
                "from_status": "received",
                "to_status": "booked",
                "actor": "t",
                "reason": None,
                "created_at": now,
            },
        ],
    )
    conn.execute(
        _table(
            "contact_tasks",
            "id",
            "referral_id",
            "partner_id",
            "environment",
            "channel",
            "purpose",
            "status",
            "note",
            "created_at",
            "updated_at",
        )
        .insert()
        .values(
            id="ctk_1",
            referral_id="ref_x",
            partner_id="ptn_x",
            environment="live",
            channel="phone",
            purpose="initial_contact",
            status="done",
            note="Daughter answered; patient is deaf",
            created_at=now,
            updated_at=now,
        )
    )
    conn.execute(
        _table(
            "appointments",
            "id",
            "referral_id",
            "physio_id",
            "partner_id",
            "environment",
            "starts_at",
            "ends_at",
            "care_mode",
            "status",
            "change_reason",
            "created_by",
            "updated_by",
            "created_at",
            "updated_at",
        )
        .insert()
        .values(
            id="apt_1",
            referral_id="ref_x",
            physio_id="phy_x",
            partner_id="ptn_x",
            environment="live",
            starts_at=now,
            ends_at=now + timedelta(hours=1),
            care_mode="face_to_face",
            status="cancelled",
            change_reason="Patient admitted to hospital",
            created_by="t",
            updated_by="t",
            created_at=now,
            updated_at=now,
        )
    )


def _snapshot(engine: sa.Engine) -> dict[str, list[Any]]:
    with engine.connect() as conn:
        return {
            name: list(conn.execute(text(f"SELECT * FROM {name} ORDER BY id")).all())
            for name in (
                "care_sessions",
                "assessments",
                "referral_transitions",
                "contact_tasks",
                "appointments",
            )
        }


def test_existing_care_notes_are_sealed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key_file = key_file_only(monkeypatch, tmp_path / "keys" / "rehabref.key")
    ring = load_key_ring(None, key_file)
    already = seal(ring, SESSION_NOTES, "Sealed before")
    with fresh_database(tmp_path) as url:
        command.downgrade(alembic_config(url), _before(url))
        engine = create_engine(sync_url(url))
        with engine.begin() as conn:
            _seed(conn, already)

        upgrade(url)

        stored = _snapshot(engine)
        sessions = stored["care_sessions"]
        assert len(sessions) == ROWS + 2
        for row in sessions[:ROWS]:
            assert row.notes_summary.startswith("s1.k1."), row.id
            assert row.cancel_reason is None or row.cancel_reason.startswith("s1.k1.")
        notes = session_notes(ring, sessions[8])
        assert (notes.notes_summary, notes.cancel_reason) == (
            "Knee flexion 8 degrees",
            "Patient in hospital 8",
        )
        assert session_notes(ring, sessions[9]).cancel_reason is None
        lookalike, sealed_before = sessions[ROWS], sessions[ROWS + 1]
        assert lookalike.id == "ses_lookalike" and sealed_before.id == "ses_sealed"
        assert lookalike.cancel_reason != "s1. patient travelled"
        assert session_notes(ring, lookalike).cancel_reason == "s1. patient travelled"
        assert sealed_before.notes_summary == already  # sealed before: left alone

        psfs, nprs = stored["assessments"]
        assert psfs.detail.startswith("s1.k1.") and "Climbing" not in psfs.detail
        assert assessment_detail(ring, psfs.detail) == {
            "tasks": [{"activity": "Climbing stairs to my flat", "score": 4}]
        }
        assert assessment_detail(ring, nprs.detail) == {}
        assert (psfs.scale, psfs.score) == ("psfs", 4.0)  # stay plain

        created, booked = stored["referral_transitions"]
        assert created.reason.startswith("s1.k1.")
        assert transition_reason(ring, created.reason) == "referral created"
        assert booked.reason is None
        (task,) = stored["contact_tasks"]
        assert task_note(ring, task.note) == "Daughter answered; patient is deaf"
        (appointment,) = stored["appointments"]
        assert appointment.change_reason.startswith("s1.k1.")
        assert change_reason(ring, appointment.change_reason) == "Patient admitted to hospital"

        # Idempotent: again from before 0030 (a run interrupted half-way), nothing is sealed twice.
        command.downgrade(alembic_config(url), _before(url))
        upgrade(url)
        again = _snapshot(engine)
        engine.dispose()
    assert again == stored


def test_it_refuses_to_seal_under_a_key_made_up_on_the_spot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No REHABREF_SECRET_KEY and no key file where the application keeps it: rows to seal
    stop the migration instead of locking them under a new key nobody has."""
    key_file = key_file_only(monkeypatch, tmp_path / "elsewhere" / "rehabref.key")
    with fresh_database(tmp_path) as url:
        command.downgrade(alembic_config(url), _before(url))
        engine = create_engine(sync_url(url))
        with engine.begin() as conn:
            _seed(conn, "Gait training")
        with pytest.raises(RuntimeError, match="no key was found"):
            upgrade(url)
        with engine.connect() as conn:
            note = conn.execute(text("SELECT note FROM contact_tasks")).scalar_one()
        engine.dispose()
    assert note == "Daughter answered; patient is deaf" and not key_file.exists()
