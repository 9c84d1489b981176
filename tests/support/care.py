"""Helpers for matching and care tests: operators, referrals inserted directly, physios."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Engine

from rehabref.crypto import blind_index, seal_optional
from rehabref.db import Database
from rehabref.events.sealing import event_data
from rehabref.ids import new_id
from rehabref.ops.auth import create_operator
from rehabref.referrals.sealing import DIAGNOSIS, REASON
from rehabref.referrals.store import PHONE_INDEX
from tests.support.partners import TEST_RING


def operator_token(database_url: str) -> str:
    async def work() -> str:
        db = Database(database_url, pool_size=1)
        try:
            async with db.write() as conn:
                return (await create_operator(conn, name="Care coordinator"))["token"]
        finally:
            await db.dispose()

    return asyncio.run(work())


def ops(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def insert_referral(
    sql: Engine,
    *,
    partner_id: str,
    environment: str = "test",
    shape: str = "g",
    status: str = "received",
    first_name: str = "Chiamaka",
    last_name: str | None = "Obi",
    phone: str | None = "+2348031234567",
    city: str = "Lagos",
    area: str | None = None,
    care_mode: str | None = None,
    reason: str | None = None,
    diagnosis: str | None = None,
    recommended_sessions: int | None = None,
    referring_doctor: str | None = None,
    preferred_contact: str | None = None,
) -> str:
    """A referral row as Shape G create (or V1 create) would leave it."""
    referral_id = new_id("ref")
    now = datetime.now(UTC)
    with sql.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO referrals (id, partner_id, environment, shape, status, external_ref,"
                " partner_reference, patient_first_name, patient_last_name, patient_phone,"
                " patient_phone_index,"
                " patient_city, patient_area, care_mode, reason, diagnosis,"
                " recommended_sessions, referring_doctor, preferred_contact, created_at,"
                " updated_at) VALUES (:id, :partner_id, :environment, :shape, :status, :ext,"
                " :pref, :first, :last, :phone, :phone_index, :city, :area, :care_mode, :reason,"
                " :diagnosis, :recommended, :doctor, :contact, :now, :now)"
            ),
            {
                "id": referral_id,
                "partner_id": partner_id,
                "environment": environment,
                "shape": shape,
                "status": status,
                "ext": f"EXT-{uuid.uuid4().hex[:10]}" if shape == "v1" else None,
                "pref": f"CASE-{uuid.uuid4().hex[:8]}" if shape == "g" else None,
                "first": first_name,
                "last": last_name,
                "phone": phone,
                "phone_index": blind_index(TEST_RING, PHONE_INDEX, phone) if phone else None,
                "city": city,
                "area": area,
                "care_mode": care_mode,
                "reason": seal_optional(TEST_RING, REASON, reason),
                "diagnosis": seal_optional(TEST_RING, DIAGNOSIS, diagnosis),
                "recommended": recommended_sessions,
                "doctor": referring_doctor,
                "contact": preferred_contact,
                "now": now,
            },
        )
    return referral_id


def physio_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": "Tunde Bakare",
        "license_number": f"MRTB/PT/2020/{uuid.uuid4().hex[:8].upper()}",
        "specializations": ["musculoskeletal", "sports"],
        "rating": 4.6,
        "phone": "+2348052223344",
        "city": "Lagos",
        "areas": ["Ikeja", "Maryland"],
        "modalities": ["home_visit", "in_clinic"],
        "weekly_capacity": 10,
    }
    body.update(overrides)
    return body


def events_of(sql: Engine, referral_id: str, event_type: str) -> list[dict[str, Any]]:
    with sql.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT data FROM events WHERE referral_id = :r AND type = :t ORDER BY occurred_at"
            ),
            {"r": referral_id, "t": event_type},
        ).all()
    return [event_data(TEST_RING, row[0]) for row in rows]
