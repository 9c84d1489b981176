"""Fixtures for scheduling tests: an operator, a physiotherapist working every day, and a
referral ready to book."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.care import insert_referral, operator_token, ops, physio_body

EVERY_DAY = [
    {"weekday": day, "start": "08:00", "end": "18:00", "slot_minutes": 60} for day in range(7)
]


@pytest.fixture(scope="session")
def op_headers(database_url):
    return ops(operator_token(database_url))


def new_physio(client, op_headers, windows=EVERY_DAY, **overrides: Any) -> dict[str, Any]:
    response = client.post(
        "/api/v1/ops/physiotherapists",
        json=physio_body(name="Kemi Adeyemi", **overrides),
        headers=op_headers,
    )
    assert response.status_code == 201, response.text
    physio: dict[str, Any] = response.json()
    if windows is not None:
        put = client.put(
            f"/api/v1/ops/physiotherapists/{physio['physio_id']}/availability",
            json={"windows": windows},
            headers=op_headers,
        )
        assert put.status_code == 200, put.text
    return physio


@pytest.fixture
def physio(client, op_headers):
    return new_physio(client, op_headers)


def ready_referral(sql, partner_id: str, **overrides: Any) -> str:
    """A live referral waiting for a booking (contact_pending), in Ikeja, Lagos."""
    values: dict[str, Any] = {
        "environment": "live",
        "status": "contact_pending",
        "area": "Ikeja",
        "care_mode": "either",
    }
    values.update(overrides)
    return insert_referral(sql, partner_id=partner_id, **values)


def free_slots(client, op_headers, physio_id: str, days: int = 7) -> list[dict[str, Any]]:
    response = client.get(
        f"/api/v1/ops/physiotherapists/{physio_id}/free-slots",
        params={"days": days},
        headers=op_headers,
    )
    assert response.status_code == 200, response.text
    slots: list[dict[str, Any]] = response.json()["data"]
    return slots


def book(client, op_headers, referral_id: str, physio_id: str, starts_at: str, **extra: Any):
    return client.post(
        f"/api/v1/ops/referrals/{referral_id}/appointments",
        json={"starts_at": starts_at, "care_mode": "face_to_face", "physio_id": physio_id, **extra},
        headers=op_headers,
    )
