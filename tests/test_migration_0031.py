"""Migration 0031 on a database of the release before it: stored webhook events (their data
and the envelope sent) and the partners' metadata are sealed in batches under the key file's
ring (the ring the application reads), the JSON columns become text, values sealed already
are left alone, and running it again changes nothing. Both backends."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest
import sqlalchemy as sa
from alembic import command
from sqlalchemy import create_engine, text

from rehabref.crypto import seal
from rehabref.db import sync_url
from rehabref.events.outbox import envelope
from rehabref.events.sealing import BODY, event_body, event_data
from rehabref.instance_secret import load_key_ring
from rehabref.migrate import alembic_config, upgrade
from rehabref.referrals.partner_metadata import partner_metadata
from tests.support.databases import fresh_database
from tests.support.key_file import key_file_only

ROWS = 1203  # more than two batches of 500
BEFORE = "0030"

# The tables as the release before 0031 has them: JSON columns, written as that code did.
_events = sa.table(
    "events",
    sa.column("id"),
    sa.column("partner_id"),
    sa.column("environment"),
    sa.column("type"),
    sa.column("referral_id"),
    sa.column("data", sa.JSON),
    sa.column("body"),
    sa.column("occurred_at"),
)
_referrals = sa.table(
    "referrals",
    sa.column("id"),
    sa.column("partner_id"),
    sa.column("environment"),
    sa.column("shape"),
    sa.column("status"),
    sa.column("patient_first_name"),
    sa.column("patient_city"),
    sa.column("partner_metadata", sa.JSON),
    sa.column("created_at"),
    sa.column("updated_at"),
)


def _event(n: int, now: datetime) -> dict[str, Any]:
    data = {
        "referral_id": f"ref_{n:05d}",
        "status": "completed",
        "clinical_summary": {"notes_summary": f"Knee flexion {n} improved"},
    }
    event_id = f"evt_{n:05d}"
    return {
        "id": event_id,
        "partner_id": "ptn_x",
        "environment": "live",
        "type": "session.completed",
        "referral_id": f"ref_{n:05d}",
        "data": data,
        "body": envelope(
            event_id=event_id, event_type="session.completed", occurred_at=now, data=data
        ),
        "occurred_at": now,
    }


def _referral(referral_id: str, metadata: Any, now: datetime) -> dict[str, Any]:
    return {
        "id": referral_id,
        "partner_id": "ptn_x",
        "environment": "live",
        "shape": "v1",
        "status": "received",
        "patient_first_name": "Ngozi",
        "patient_city": "Enugu",
        "partner_metadata": metadata,
        "created_at": now,
        "updated_at": now,
    }


def test_existing_events_and_metadata_are_sealed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key_file = key_file_only(monkeypatch, tmp_path / "keys" / "rehabref.key")
    ring = load_key_ring(None, key_file)
    now = datetime.now(UTC)
    events = [_event(n, now) for n in range(ROWS)]
    with fresh_database(tmp_path) as url:
        command.downgrade(alembic_config(url), BEFORE)
        engine = create_engine(sync_url(url))
        sealed_body = seal(ring, BODY, events[0]["body"])
        with engine.begin() as conn:
            conn.execute(sa.insert(_events), events)
            conn.execute(
                sa.insert(_referrals),
                [
                    _referral("ref_meta", {"patient_number": "PN-77", "ward": "B"}, now),
                    _referral("ref_none", None, now),
                ],
            )
            # A body sealed already (a run interrupted half-way): left as it is.
            conn.execute(
                text("UPDATE events SET body = :b WHERE id = :e"),
                {"b": sealed_body, "e": "evt_00000"},
            )

        upgrade(url)

        with engine.connect() as conn:
            rows = conn.execute(text("SELECT id, data, body FROM events ORDER BY id")).all()
            metadata = dict(
                conn.execute(text("SELECT id, partner_metadata FROM referrals ORDER BY id")).all()
            )
        assert len(rows) == ROWS
        for row, before in zip(rows, events, strict=True):
            assert row.data.startswith("s1.k1.") and row.body.startswith("s1.k1."), row.id
            assert "Knee flexion" not in row.data + row.body
            assert event_data(ring, row.data) == before["data"]
            # The exact bytes the partner was (and will be) sent, so signatures are unchanged.
            assert event_body(ring, row.body) == before["body"].encode()
        assert rows[0].body == sealed_body  # sealed before: left alone
        assert metadata["ref_meta"].startswith("s1.k1.")
        assert partner_metadata(ring, metadata["ref_meta"]) == {
            "patient_number": "PN-77",
            "ward": "B",
        }
        # No metadata: NULL, or JSON null as the old column stored it; both read as None.
        assert partner_metadata(ring, metadata["ref_none"]) is None

        # Idempotent: again from 0030 (a run interrupted half-way), nothing is sealed twice.
        command.downgrade(alembic_config(url), BEFORE)
        upgrade(url)
        with engine.connect() as conn:
            again = conn.execute(text("SELECT id, data, body FROM events ORDER BY id")).all()
            metadata_again = dict(
                conn.execute(text("SELECT id, partner_metadata FROM referrals ORDER BY id")).all()
            )
        engine.dispose()
    assert again == rows
    assert metadata_again == metadata


def test_plain_values_stay_readable_without_the_migration() -> None:
    """Rows the migration has not reached yet are read as they are: values without the
    ``s1.`` envelope are plain."""
    ring = load_key_ring("k1:" + "x" * 43, Path("unused"))
    data = {"referral_id": "ref_1", "status": "received"}
    text_data = msgspec.json.encode(data).decode()
    assert event_data(ring, text_data) == data
    assert event_body(ring, '{"event_id":"evt_1"}') == b'{"event_id":"evt_1"}'
    assert partner_metadata(ring, '{"ward":"B"}') == {"ward": "B"}
    assert partner_metadata(ring, "null") is None
    assert partner_metadata(ring, None) is None


def test_it_refuses_to_seal_under_a_key_made_up_on_the_spot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No REHABREF_SECRET_KEY and no key file where the application keeps it: events to seal
    stop the migration instead of locking them under a new key nobody has."""
    key_file = key_file_only(monkeypatch, tmp_path / "elsewhere" / "rehabref.key")
    now = datetime.now(UTC)
    event = _event(1, now)
    with fresh_database(tmp_path) as url:
        command.downgrade(alembic_config(url), BEFORE)
        engine = create_engine(sync_url(url))
        with engine.begin() as conn:
            conn.execute(sa.insert(_events), [event])
        with pytest.raises(RuntimeError, match="no key was found"):
            upgrade(url)
        with engine.connect() as conn:
            body = conn.execute(text("SELECT body FROM events")).scalar_one()
        engine.dispose()
    assert body == event["body"] and not key_file.exists()
