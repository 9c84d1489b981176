"""The sandbox roster: created on first use per partner and city, never mixed with the live
registry (matching, the ops registry API, session booking and CSV imports), through a real
server and database."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text

from tests.matching.conftest import run_import
from tests.support.care import insert_referral, operator_token, ops, physio_body

PHYSIOS = "/api/v1/ops/physiotherapists"


@pytest.fixture(scope="module")
def op_headers(database_url):
    return ops(operator_token(database_url))


@pytest.fixture
def city():
    return f"Zungeru {uuid.uuid4().hex[:6]}"  # a city no registry covers


def _match(client, op_headers, referral_id):
    response = client.post(f"/api/v1/ops/referrals/{referral_id}/match", headers=op_headers)
    assert response.status_code == 200, response.text
    return response.json()


def _roster(sql, partner_id, city):
    with sql.connect() as conn:
        return conn.execute(
            text(
                "SELECT id, license_number, environment FROM physiotherapists "
                "WHERE partner_id = :p AND city = :c ORDER BY license_number"
            ),
            {"p": partner_id, "c": city},
        ).all()


def test_each_partner_gets_its_own_roster_for_any_city(client, op_headers, make_partner, sql, city):
    registry_physio = client.post(PHYSIOS, json=physio_body(city=city), headers=op_headers).json()
    first, second = make_partner(name="Roster A"), make_partner(name="Roster B")
    referral = insert_referral(sql, partner_id=first["partner_id"], city=city)
    matched = _match(client, op_headers, referral)
    assert matched["matched"] is True
    assert matched["physio_id"] != registry_physio["physio_id"]
    roster = _roster(sql, first["partner_id"], city)
    assert len(roster) == 3
    assert matched["physio_id"] in {row.id for row in roster}
    assert all(row.environment == "test" for row in roster)
    assert all(row.license_number.startswith("SANDBOX-") for row in roster)
    # The same city again: the same roster. Another partner: a roster of its own.
    again = insert_referral(sql, partner_id=first["partner_id"], city=city)
    assert _match(client, op_headers, again)["physio_id"] in {row.id for row in roster}
    assert _roster(sql, first["partner_id"], city) == roster
    other = insert_referral(sql, partner_id=second["partner_id"], city=city)
    other_match = _match(client, op_headers, other)["physio_id"]
    other_roster = _roster(sql, second["partner_id"], city)
    assert other_match in {row.id for row in other_roster}
    assert not {row.id for row in other_roster} & {row.id for row in roster}


def test_the_roster_never_reaches_the_registry_or_live_referrals(
    client, op_headers, partner, sql, city
):
    referral = insert_referral(sql, partner_id=partner["partner_id"], city=city)
    sandbox_physio = _match(client, op_headers, referral)["physio_id"]
    # The ops registry API does not know it.
    listed = client.get(PHYSIOS, params={"city": city}, headers=op_headers).json()
    assert listed["data"] == []
    assert client.get(f"{PHYSIOS}/{sandbox_physio}", headers=op_headers).status_code == 404
    patch = client.patch(f"{PHYSIOS}/{sandbox_physio}", json={"rating": 1}, headers=op_headers)
    assert patch.status_code == 404
    deactivate = client.post(f"{PHYSIOS}/{sandbox_physio}/deactivate", headers=op_headers)
    assert deactivate.status_code == 404
    # A live referral in that city is never offered it: nobody fits.
    live = insert_referral(sql, environment="live", partner_id=partner["partner_id"], city=city)
    assert _match(client, op_headers, live)["matched"] is False
    # Nor can a session of a live referral be booked with it, or a test one with the registry.
    booked = client.post(
        f"/api/v1/ops/referrals/{live}/sessions",
        json={
            "scheduled_at": "2026-11-23T09:00:00Z",
            "modality": "home_visit",
            "physio_id": sandbox_physio,
        },
        headers=op_headers,
    )
    assert booked.status_code == 422
    assert "physio_id" in booked.json()["error"]["fields"]
    registry_physio = client.post(PHYSIOS, json=physio_body(city=city), headers=op_headers).json()[
        "physio_id"
    ]
    booked = client.post(
        f"/api/v1/ops/referrals/{referral}/sessions",
        json={
            "scheduled_at": "2026-11-23T09:00:00Z",
            "modality": "home_visit",
            "physio_id": registry_physio,
        },
        headers=op_headers,
    )
    assert booked.status_code == 422
    assert "physio_id" in booked.json()["error"]["fields"]


def test_a_csv_import_never_touches_the_roster(
    client, op_headers, partner, sql, city, database_url, tmp_path
):
    referral = insert_referral(sql, partner_id=partner["partner_id"], city=city)
    _match(client, op_headers, referral)
    roster = _roster(sql, partner["partner_id"], city)
    taken = roster[0].license_number
    csv = tmp_path / "physios.csv"
    csv.write_text(
        "name,license_number,specializations,rating,phone,city,areas,modalities,"
        "weekly_capacity,active\n"
        f"Real Person,{taken},general,4.1,+2348074805772,{city},Centre,in_clinic,5,true\n"
    )
    result = run_import(database_url, csv)
    assert result.returncode == 0, result.stderr
    assert "created 1, updated 0, rejected 0" in result.stdout
    assert _roster(sql, partner["partner_id"], city) == roster  # untouched
    listed = client.get(PHYSIOS, params={"city": city}, headers=op_headers).json()["data"]
    assert [(item["name"], item["license_number"]) for item in listed] == [("Real Person", taken)]
