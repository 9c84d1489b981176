"""Retention: the pure policy (no clock), and ``rehabref retention`` dry-run against a real
run on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text

from rehabref.config import ConfigError, load_settings
from rehabref.referrals.sealing import PHONE, open_text
from rehabref.workflows.retention import (
    Periods,
    cutoffs,
    referral_due,
    reply_due,
    session_due,
)
from tests.rights.test_data_subject import new_phone
from tests.support.api import created
from tests.support.operators import move
from tests.support.partners import TEST_RING, TEST_SECRET_KEY
from tests.support.server import isolated_environ

NOW = datetime(2027, 6, 1, 12, 0, tzinfo=UTC)
PERIODS = Periods(assistant_sessions=timedelta(days=30), closed_referrals=timedelta(days=365))


def test_policy_decides_what_is_due_without_a_clock():
    at = cutoffs(PERIODS, NOW)
    assert reply_due(NOW, at) and reply_due(NOW - timedelta(seconds=1), at)
    assert not reply_due(NOW + timedelta(seconds=1), at)
    expired_long_ago = NOW - timedelta(days=31)
    assert session_due(expired_long_ago, None, at)
    assert not session_due(expired_long_ago, NOW - timedelta(days=40), at)  # completed
    assert not session_due(NOW - timedelta(days=29), None, at)
    year_ago = NOW - timedelta(days=365)
    assert referral_due("cancelled", year_ago, None, at)
    assert referral_due("closed", year_ago - timedelta(days=1), None, at)
    assert not referral_due("closed", year_ago + timedelta(seconds=1), None, at)
    assert not referral_due("booked", year_ago - timedelta(days=9), None, at)  # still open
    assert not referral_due("closed", year_ago, NOW - timedelta(days=1), at)  # erased already
    # Naive timestamps (SQLite) are UTC.
    assert referral_due("cancelled", year_ago.replace(tzinfo=None), None, at)


def test_periods_are_settings_checked_at_start_up():
    settings = load_settings({"REHABREF_RETENTION_CLOSED_REFERRAL_DAYS": "90"})
    assert settings.retention_closed_referral_days == 90
    assert load_settings({}).retention_assistant_session_days == 30
    assert load_settings({}).retention_closed_referral_days == 365
    for bad in ("0", "-1", "a year"):
        with pytest.raises(ConfigError, match="REHABREF_RETENTION_CLOSED_REFERRAL_DAYS"):
            load_settings({"REHABREF_RETENTION_CLOSED_REFERRAL_DAYS": bad})


def cli(database_url: str, *args: str) -> Any:
    result = subprocess.run(
        [sys.executable, "-m", "rehabref.cli", *args],
        env={
            **isolated_environ(),
            "REHABREF_DATABASE_URL": database_url,
            "REHABREF_SECRET_KEY": TEST_SECRET_KEY,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result


def test_retention_dry_run_reports_and_a_real_run_removes(
    client, partner, operator_token, sql, database_url
):
    key = partner["keys"]["sk_test"]
    old_phone, open_phone = new_phone(), new_phone()
    ended = created(client, key, patient={"first_name": "Old", "phone": old_phone, "city": "Kano"})
    still_open = created(
        client, key, patient={"first_name": "Open", "phone": open_phone, "city": "Kano"}
    )
    assert move(client, operator_token, ended["referral_id"], "cancelled").status_code == 200
    long_ago = datetime.now(UTC) - timedelta(days=400)
    with sql.begin() as conn:
        conn.execute(
            text("UPDATE referrals SET updated_at = :t WHERE id IN (:a, :b)"),
            {"t": long_ago, "a": ended["referral_id"], "b": still_open["referral_id"]},
        )
        conn.execute(
            text("UPDATE assistant_sessions SET expires_at = :t WHERE referral_id = :r"),
            {"t": long_ago, "r": still_open["referral_id"]},
        )
        conn.execute(
            text("UPDATE idempotency_records SET expires_at = :t WHERE partner_id = :p"),
            {"t": long_ago, "p": partner["partner_id"]},
        )

    def snapshot() -> tuple[Any, ...]:
        with sql.connect() as conn:
            return (
                conn.execute(
                    text("SELECT patient_phone FROM referrals WHERE id = :r"),
                    {"r": ended["referral_id"]},
                ).scalar_one(),
                conn.execute(
                    text("SELECT count(*) FROM assistant_sessions WHERE referral_id = :r"),
                    {"r": still_open["referral_id"]},
                ).scalar_one(),
                conn.execute(
                    text("SELECT count(*) FROM idempotency_records WHERE partner_id = :p"),
                    {"p": partner["partner_id"]},
                ).scalar_one(),
            )

    before = snapshot()
    stored_phone = open_text(TEST_RING, PHONE, before[0])  # sealed at rest
    assert stored_phone == old_phone and before[1] >= 1 and before[2] >= 2

    report = json.loads(cli(database_url, "retention", "--dry-run").stdout)
    assert report["dry_run"] is True
    assert report["periods_days"] == {"assistant_sessions": 30, "closed_referrals": 365}
    assert report["due"]["closed_referrals"] >= 1
    assert report["due"]["assistant_sessions"] >= before[1]
    assert report["due"]["idempotency_replies"] >= before[2]
    assert snapshot() == before  # a dry run changes nothing

    done = json.loads(cli(database_url, "retention").stdout)
    assert done["removed"]["closed_referrals"] >= 1
    assert snapshot() == (None, 0, 0)
    with sql.connect() as conn:
        still = conn.execute(
            text(
                "SELECT patient_phone, erased_at, consent_withdrawn_at FROM referrals WHERE id = :r"
            ),
            {"r": still_open["referral_id"]},
        ).one()
        erased = conn.execute(
            text("SELECT status, erased_at, consent_withdrawn_at FROM referrals WHERE id = :r"),
            {"r": ended["referral_id"]},
        ).one()
    kept = open_text(TEST_RING, PHONE, still.patient_phone)
    assert kept == open_phone and still.erased_at is None  # not ended: kept
    assert erased.status == "cancelled" and erased.erased_at is not None
    assert erased.consent_withdrawn_at is None  # retention is not a withdrawal
    again = json.loads(cli(database_url, "retention", "--dry-run").stdout)
    assert again["due"]["idempotency_replies"] == 0


def test_cli_exports_and_erases_a_person(client, partner, database_url, tmp_path, sql):
    from pypdf import PdfReader

    phone = new_phone()
    referral_id = created(
        client,
        partner["keys"]["sk_test"],
        patient={"first_name": "Halima", "phone": phone, "city": "Kaduna"},
    )["referral_id"]
    out, pdf = tmp_path / "export.json", tmp_path / "export.pdf"
    run = cli(
        database_url,
        "data-subject",
        "export",
        "--phone",
        phone,
        "--out",
        str(out),
        "--pdf",
        str(pdf),
    )
    assert "dsr_" in run.stderr
    document = json.loads(out.read_text())
    assert [r["id"] for r in document["referrals"]] == [referral_id]
    assert oct(out.stat().st_mode & 0o777) == "0o600"
    assert "Halima" in PdfReader(str(pdf)).pages[0].extract_text()

    erased = json.loads(
        cli(database_url, "data-subject", "erase", "--phone", phone, "--yes").stdout
    )
    assert erased["result"]["referrals"] == 1
    with sql.connect() as conn:
        name = conn.execute(
            text("SELECT patient_first_name FROM referrals WHERE id = :r"), {"r": referral_id}
        ).scalar_one()
    assert name == "[erased]"
    bad = subprocess.run(
        [sys.executable, "-m", "rehabref.cli", "data-subject", "erase", "--yes"],
        env={**isolated_environ(), "REHABREF_DATABASE_URL": database_url},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "phone" in bad.stderr
