"""Silence and bookings: a reminder after 24 h without an answer, a coordinator after 72 h;
a booked visit confirmed on the patient's channel and reminded the day before (test keys,
so the sandbox records every message)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from sqlalchemy import text

from rehabref.db import Database
from rehabref.workflows.appointment_messages import REMINDER_JOB, send_reminder
from rehabref.workflows.conversation import nudge_silent
from tests.conftest import count
from tests.support.api import created
from tests.support.messages import opened_content
from tests.support.operators import moved
from tests.support.partners import TEST_RING


def purposes(sql, referral_id: str) -> list[str]:
    with sql.connect() as conn:
        rows = conn.execute(
            text("SELECT purpose FROM outbound_messages WHERE referral_id = :r ORDER BY id"),
            {"r": referral_id},
        )
        return [row.purpose for row in rows]


def nudge_until_done(database_url: str, at: datetime) -> None:
    async def run() -> None:
        db = Database(database_url, pool_size=1)
        try:
            while await nudge_silent(db, ring=TEST_RING, now=at):
                pass
        finally:
            await db.dispose()

    asyncio.run(run())


def test_silence_gets_one_reminder_then_a_coordinator(client, partner, sql, database_url):
    referral_id = created(client, partner["keys"]["sk_test"])["referral_id"]
    assert purposes(sql, referral_id) == ["intake.first_contact"]
    now = datetime.now(UTC)
    nudge_until_done(database_url, now + timedelta(hours=23))
    assert purposes(sql, referral_id) == ["intake.first_contact"]
    nudge_until_done(database_url, now + timedelta(hours=25))
    assert purposes(sql, referral_id) == ["intake.first_contact", "intake.reminder"]
    nudge_until_done(database_url, now + timedelta(hours=50))  # reminded once only
    assert purposes(sql, referral_id) == ["intake.first_contact", "intake.reminder"]
    assert (
        count(sql, "SELECT count(*) FROM contact_tasks WHERE referral_id = :r", r=referral_id) == 0
    )
    nudge_until_done(database_url, now + timedelta(hours=73))
    assert (
        count(
            sql,
            "SELECT count(*) FROM contact_tasks WHERE referral_id = :r AND purpose = 'no_response'",
            r=referral_id,
        )
        == 1
    )
    with sql.connect() as conn:
        closed = conn.execute(
            text("SELECT closed_at FROM intake_conversations WHERE referral_id = :r"),
            {"r": referral_id},
        ).scalar()
    assert closed is not None


def test_a_booking_is_confirmed_and_reminded_the_day_before_only_if_unchanged(
    client, partner, sql, database_url, operator_token
):
    referral_id = created(client, partner["keys"]["sk_test"])["referral_id"]
    visit = (datetime.now(UTC) + timedelta(days=3)).replace(microsecond=0)
    appointment = {"scheduled_at": visit.isoformat(), "care_mode": "face_to_face"}
    moved(client, operator_token, referral_id, "assistant_started")
    moved(client, operator_token, referral_id, "booked", appointment=appointment)
    assert purposes(sql, referral_id)[-1] == "appointment.confirmed"
    with sql.connect() as conn:
        job = conn.execute(
            text("SELECT payload, due_at FROM scheduled_jobs WHERE referral_id = :r AND kind = :k"),
            {"r": referral_id, "k": REMINDER_JOB},
        ).one()
        content = conn.execute(
            text(
                "SELECT content FROM outbound_messages WHERE referral_id = :r AND purpose = "
                "'appointment.confirmed'"
            ),
            {"r": referral_id},
        ).scalar_one()
    assert "rehabref_appointment_confirmed" in str(opened_content(content))
    assert "in person" in str(opened_content(content))

    async def remind(payload: dict) -> None:
        db = Database(database_url, pool_size=1)
        try:
            async with db.write() as conn:
                await send_reminder(conn, payload, datetime.now(UTC), ring=TEST_RING)
        finally:
            await db.dispose()

    payload = (
        job.payload if isinstance(job.payload, dict) else __import__("json").loads(job.payload)
    )
    asyncio.run(remind(payload))
    assert purposes(sql, referral_id)[-1] == "appointment.reminder"

    # Moved to another day: the old reminder job says nothing.
    later = {"scheduled_at": (visit + timedelta(days=2)).isoformat(), "care_mode": "face_to_face"}
    moved(client, operator_token, referral_id, "booked", appointment=later)
    before = purposes(sql, referral_id)
    asyncio.run(remind(payload))
    assert purposes(sql, referral_id) == before
