"""Shape G retrieve: one record by referral id, tracking code or partner_reference."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import insert, update

from rehabref.ids import new_id
from rehabref.tables import metadata
from tests.conftest import auth
from tests.shapeg.bodies import g_referral
from tests.support.payloads import v1_referral

PATH = "/api/v1/partners/referrals"


def _create(client, key, **overrides):
    response = client.post(PATH, json=g_referral(**overrides), headers=auth(key))
    assert response.status_code == 201, response.text
    return response.json()


def _get(client, key, ident):
    return client.get(f"{PATH}/{ident}", headers=auth(key))


def test_every_key_gives_the_identical_record(client, partner):
    key = partner["keys"]["sk_test"]
    created = _create(client, key)
    by_id = _get(client, key, created["referral_id"])
    by_code = _get(client, key, created["tracking_code"])
    by_code_lower = _get(client, key, created["tracking_code"].lower())
    by_reference = _get(client, key, created["partner_reference"])
    assert by_id.status_code == 200, by_id.text
    assert by_id.json() == by_code.json() == by_code_lower.json() == by_reference.json()
    record = by_id.json()
    assert record == {
        "status": "success",
        "referral_id": created["referral_id"],
        "tracking_code": created["tracking_code"],
        "partner_reference": created["partner_reference"],
        "tracking_url": created["tracking_url"],
        "current_status": "pending_intake",
        "patient": {
            "firstName": "Chidi",
            "lastName": "Okafor",
            "phone": "+2348031234567",
            "city": "Lagos",
        },
        "assigned_physiotherapist": None,
        "sessions_completed": 0,
        "sessions_total": 6,
        "last_session_at": None,
        "next_session_at": None,
        "created_at": record["created_at"],
    }
    assert record["created_at"].endswith("Z")
    # The record carries no clinical content.
    assert "diagnosis" not in by_id.text and "ACL" not in by_id.text


def test_unknown_key_is_a_404_with_the_error_body(client, partner):
    response = _get(client, partner["keys"]["sk_test"], "no-such-reference")
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["code"] == "not_found"
    assert set(error) == {"code", "message", "fields", "request_id"}


def test_keys_are_scoped_to_partner_and_environment(client, partner, make_partner):
    created = _create(client, partner["keys"]["sk_test"])
    other = make_partner(name="Someone Else")
    for ident in (created["referral_id"], created["tracking_code"], created["partner_reference"]):
        assert _get(client, other["keys"]["sk_test"], ident).status_code == 404
        assert _get(client, partner["keys"]["sk_live"], ident).status_code == 404


def test_v1_referrals_keep_the_v1_record(client, partner):
    key = partner["keys"]["sk_test"]
    created = client.post(PATH, json=v1_referral(), headers=auth(key, "v1-keep")).json()
    record = _get(client, key, created["referral_id"]).json()
    assert record["external_ref"] == created["external_ref"]
    assert "current_status" not in record


def test_current_status_follows_the_referral(client, partner, sql):
    key = partner["keys"]["sk_test"]
    created = _create(client, key)
    referral_id = created["referral_id"]
    tables = metadata.tables
    now = datetime.now(UTC)
    physio_id = new_id("phy")
    with sql.begin() as conn:
        conn.execute(
            update(tables["assistant_sessions"])
            .where(tables["assistant_sessions"].c.referral_id == referral_id)
            .values(completed_at=now)
        )
    assert _get(client, key, referral_id).json()["current_status"] == "intake_completed"
    with sql.begin() as conn:
        conn.execute(
            insert(tables["physiotherapists"]),
            {
                "id": physio_id,
                "name": "Bola Ade",
                "license_number": f"MRTB-{physio_id[-8:]}",
                "specializations": ["orthopaedic", "sports"],
                "rating": 4.8,
                "phone": "+2348030000001",
                "city": "Lagos",
                "city_key": "lagos",
                "areas": ["surulere"],
                "modalities": ["home_visit"],
                "weekly_capacity": 10,
                "active": True,
                "created_at": now,
                "updated_at": now,
            },
        )
        conn.execute(
            update(tables["referrals"])
            .where(tables["referrals"].c.id == referral_id)
            .values(assigned_physio_id=physio_id)
        )
    record = _get(client, key, referral_id).json()
    assert record["current_status"] == "matched"
    assert record["assigned_physiotherapist"] == {
        "name": "Bola Ade",
        "licenseNumber": f"MRTB-{physio_id[-8:]}",
        "specialization": "orthopaedic",
        "rating": 4.8,
        "phone": "+2348030000001",
    }
    done_at = now - timedelta(days=1)
    next_at = now + timedelta(days=2)
    session = {
        "referral_id": referral_id,
        "partner_id": partner["partner_id"],
        "environment": "test",
        "physio_id": physio_id,
        "session_type": "Exercise therapy",
        "modality": "home_visit",
        "created_by": "test",
        "updated_by": "test",
        "created_at": now,
        "updated_at": now,
    }
    with sql.begin() as conn:
        conn.execute(
            insert(tables["care_sessions"]),
            [
                {
                    **session,
                    "id": new_id("ses"),
                    "session_number": 1,
                    "status": "completed",
                    "scheduled_at": done_at,
                    "completed_at": done_at,
                },
                {
                    **session,
                    "id": new_id("ses"),
                    "session_number": 2,
                    "status": "scheduled",
                    "scheduled_at": next_at,
                    "completed_at": None,
                },
            ],
        )
    record = _get(client, key, created["tracking_code"]).json()
    assert record["current_status"] == "in_treatment"
    assert record["sessions_completed"] == 1
    assert record["sessions_total"] == 6
    assert record["last_session_at"].startswith(done_at.strftime("%Y-%m-%dT%H:%M"))
    assert record["next_session_at"].startswith(next_at.strftime("%Y-%m-%dT%H:%M"))
    with sql.begin() as conn:
        conn.execute(
            update(tables["referrals"])
            .where(tables["referrals"].c.id == referral_id)
            .values(status="cancelled")
        )
    assert _get(client, key, referral_id).json()["current_status"] == "cancelled"


def test_lists_render_each_referral_in_its_own_shape(client, make_partner):
    key = make_partner(name="Mixed Clinic")["keys"]["sk_test"]
    g = _create(client, key)
    v1 = client.post(PATH, json=v1_referral(), headers=auth(key, "mixed-v1")).json()
    page = client.get(PATH, headers=auth(key))
    assert page.status_code == 200, page.text
    data = page.json()["data"]
    assert [item["referral_id"] for item in data] == [v1["referral_id"], g["referral_id"]]
    assert data[0]["external_ref"] == v1["external_ref"]
    assert data[1] == _get(client, key, g["referral_id"]).json()
