"""No double booking: the database refuses a second holder of a slot, and many coordinators
booking the same slot at once get exactly one visit (PostgreSQL: real concurrent
transactions; SQLite: one writer, the same answer)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from tests.scheduling.conftest import free_slots, ready_referral

THREADS = 24


def _appointment_row(referral_id, physio_id, partner_id, starts_at, status="booked"):
    now = datetime.now(UTC)
    return {
        "id": f"apt_{referral_id[-12:]}_{status}",
        "referral_id": referral_id,
        "physio_id": physio_id,
        "partner_id": partner_id,
        "environment": "live",
        "starts_at": starts_at,
        "ends_at": starts_at + timedelta(hours=1),
        "care_mode": "face_to_face",
        "status": status,
        "by": "test",
        "now": now,
    }


INSERT = text(
    "INSERT INTO appointments (id, referral_id, physio_id, partner_id, environment, starts_at,"
    " ends_at, care_mode, status, created_by, updated_by, created_at, updated_at) VALUES (:id,"
    " :referral_id, :physio_id, :partner_id, :environment, :starts_at, :ends_at, :care_mode,"
    " :status, :by, :by, :now, :now)"
)


def test_the_database_refuses_a_second_holder_of_a_slot(make_partner, physio, sql):
    partner = make_partner(contract="g")
    first = ready_referral(sql, partner["partner_id"])
    second = ready_referral(sql, partner["partner_id"])
    third = ready_referral(sql, partner["partner_id"])
    when = datetime(2027, 3, 1, 9, tzinfo=UTC)
    with sql.begin() as conn:
        conn.execute(
            INSERT, _appointment_row(first, physio["physio_id"], partner["partner_id"], when)
        )
    with pytest.raises(IntegrityError), sql.begin() as conn:
        conn.execute(
            INSERT, _appointment_row(second, physio["physio_id"], partner["partner_id"], when)
        )
    # A cancelled appointment no longer holds the slot.
    with sql.begin() as conn:
        conn.execute(
            INSERT,
            _appointment_row(third, physio["physio_id"], partner["partner_id"], when, "cancelled"),
        )


def test_many_concurrent_bookings_of_one_slot_give_one_visit(
    server, make_partner, op_headers, physio, sql, backend
):
    partner = make_partner(contract="g")
    referrals = [ready_referral(sql, partner["partner_id"]) for _ in range(THREADS)]
    slot = free_slots(httpx.Client(base_url=server.base_url), op_headers, physio["physio_id"])[0]

    def attempt(referral_id: str) -> httpx.Response:
        with httpx.Client(base_url=server.base_url, timeout=60) as http:
            return http.post(
                f"/api/v1/ops/referrals/{referral_id}/appointments",
                json={
                    "starts_at": slot["starts_at"],
                    "care_mode": "face_to_face",
                    "physio_id": physio["physio_id"],
                },
                headers=op_headers,
            )

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        answers = list(pool.map(attempt, referrals))
    codes = sorted(a.status_code for a in answers)
    assert codes == [201] + [409] * (THREADS - 1), [a.text for a in answers if a.status_code >= 500]
    assert {a.json()["error"]["code"] for a in answers if a.status_code == 409} == {
        "slot_unavailable"
    }
    with sql.connect() as conn:
        holders = conn.execute(
            text("SELECT count(*) FROM appointments WHERE physio_id = :p AND status = 'booked'"),
            {"p": physio["physio_id"]},
        ).scalar_one()
        sessions = conn.execute(
            text("SELECT count(*) FROM care_sessions WHERE physio_id = :p"),
            {"p": physio["physio_id"]},
        ).scalar_one()
        booked = conn.execute(
            text(
                "SELECT count(*) FROM events WHERE type = 'appointment.booked' AND referral_id IN"
                " (SELECT referral_id FROM appointments WHERE physio_id = :p)"
            ),
            {"p": physio["physio_id"]},
        ).scalar_one()
    assert (holders, sessions, booked) == (1, 1, 1)


def test_concurrent_bookings_of_one_referral_into_different_slots_give_one_visit(
    server, make_partner, op_headers, physio, sql
):
    partner = make_partner(contract="g")
    referral_id = ready_referral(sql, partner["partner_id"])
    slots = free_slots(httpx.Client(base_url=server.base_url), op_headers, physio["physio_id"])
    chosen = [s["starts_at"] for s in slots[:12]]

    def attempt(starts_at: str) -> int:
        with httpx.Client(base_url=server.base_url, timeout=60) as http:
            return http.post(
                f"/api/v1/ops/referrals/{referral_id}/appointments",
                json={
                    "starts_at": starts_at,
                    "care_mode": "face_to_face",
                    "physio_id": physio["physio_id"],
                },
                headers=op_headers,
            ).status_code

    with ThreadPoolExecutor(max_workers=len(chosen)) as pool:
        codes = sorted(pool.map(attempt, chosen))
    assert codes == [201] + [409] * (len(chosen) - 1)
