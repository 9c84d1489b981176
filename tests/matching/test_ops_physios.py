"""The physiotherapist registry and manual matching through the ops API (real server)."""

from __future__ import annotations

import uuid

import pytest

from tests.conftest import auth
from tests.support.care import events_of, insert_referral, operator_token, ops, physio_body

PATH = "/api/v1/ops/physiotherapists"


@pytest.fixture(scope="module")
def op_headers(database_url):
    return ops(operator_token(database_url))


@pytest.fixture
def city():
    return f"Testville {uuid.uuid4().hex[:6]}"


def test_create_get_update_list_deactivate(client, op_headers, city):
    created = client.post(
        PATH, json=physio_body(city=f" {city} ", areas=["Allen", "Opebi"]), headers=op_headers
    )
    assert created.status_code == 201, created.text
    physio = created.json()
    assert physio["physio_id"].startswith("phy_")
    assert physio["specialization"] == "musculoskeletal"
    assert physio["areas"] == ["allen", "opebi"]
    assert physio["active"] is True
    physio_id = physio["physio_id"]

    fetched = client.get(f"{PATH}/{physio_id}", headers=op_headers).json()
    assert fetched == physio

    patched = client.patch(
        f"{PATH}/{physio_id}", json={"rating": 3.9, "weekly_capacity": 2}, headers=op_headers
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["rating"] == 3.9 and patched.json()["weekly_capacity"] == 2
    assert patched.json()["name"] == physio["name"]

    second = client.post(PATH, json=physio_body(city=city), headers=op_headers).json()
    listed = client.get(PATH, params={"city": city.upper()}, headers=op_headers).json()
    assert [item["physio_id"] for item in listed["data"]] == [physio_id, second["physio_id"]]
    page = client.get(PATH, params={"city": city, "limit": 1}, headers=op_headers).json()
    assert page["has_more"] is True and len(page["data"]) == 1
    rest = client.get(
        PATH, params={"city": city, "cursor": page["next_cursor"]}, headers=op_headers
    ).json()
    assert [item["physio_id"] for item in rest["data"]] == [second["physio_id"]]

    off = client.post(f"{PATH}/{physio_id}/deactivate", headers=op_headers)
    assert off.status_code == 200 and off.json()["active"] is False
    active = client.get(PATH, params={"city": city, "active": "true"}, headers=op_headers).json()
    assert [item["physio_id"] for item in active["data"]] == [second["physio_id"]]
    inactive = client.get(PATH, params={"city": city, "active": "false"}, headers=op_headers)
    assert [item["physio_id"] for item in inactive.json()["data"]] == [physio_id]


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"rating": 5.5}, "rating"),
        ({"rating": -1}, "rating"),
        ({"modalities": ["teleport"]}, "modalities.0"),
        ({"modalities": []}, "modalities"),
        ({"specializations": ["astrology"]}, "specializations.0"),
        ({"phone": "0803 123 4567"}, "phone"),
        ({"weekly_capacity": -1}, "weekly_capacity"),
        ({"license_number": "a b"}, "license_number"),
        ({"name": ""}, "name"),
    ],
)
def test_invalid_fields_are_422(client, op_headers, overrides, field):
    response = client.post(PATH, json=physio_body(**overrides), headers=op_headers)
    assert response.status_code == 422, response.text
    assert field in response.json()["error"]["fields"]


def test_duplicate_license_and_bad_patches(client, op_headers, city):
    body = physio_body(city=city)
    physio_id = client.post(PATH, json=body, headers=op_headers).json()["physio_id"]
    again = client.post(PATH, json=body, headers=op_headers)
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "duplicate_license_number"
    for patch in ({}, {"rating": None}, {"license_number": "X-1"}):
        assert (
            client.patch(f"{PATH}/{physio_id}", json=patch, headers=op_headers).status_code == 422
        )
    assert (
        client.patch(f"{PATH}/phy_missing", json={"rating": 4}, headers=op_headers).status_code
        == 404
    )
    assert client.get(f"{PATH}/phy_missing", headers=op_headers).status_code == 404
    bad = client.get(
        PATH, params={"active": "maybe", "limit": 0, "cursor": "x"}, headers=op_headers
    )
    assert bad.status_code == 422
    assert set(bad.json()["error"]["fields"]) == {"active", "limit", "cursor"}


def test_match_endpoint_assigns_or_queues(client, op_headers, partner, sql, city):
    physio_id = client.post(
        PATH, json=physio_body(city=city, weekly_capacity=1), headers=op_headers
    ).json()["physio_id"]
    first = insert_referral(
        sql, environment="live", partner_id=partner["partner_id"], city=city, reason="Knee pain"
    )
    matched = client.post(f"/api/v1/ops/referrals/{first}/match", headers=op_headers).json()
    assert matched["matched"] is True and matched["physio_id"] == physio_id
    assert matched["matched_at"].endswith("Z")
    assert len(events_of(sql, first, "provider.matched")) == 1

    second = insert_referral(sql, environment="live", partner_id=partner["partner_id"], city=city)
    full = client.post(f"/api/v1/ops/referrals/{second}/match", headers=op_headers).json()
    assert full == {"referral_id": second, "matched": False, "physio_id": None, "matched_at": None}
    assert (
        client.post("/api/v1/ops/referrals/ref_missing/match", headers=op_headers).status_code
        == 404
    )


def test_partner_keys_are_refused(client, partner):
    headers = auth(partner["keys"]["sk_test"])
    assert client.get(PATH, headers=headers).status_code == 401
    assert client.post(PATH, json=physio_body(), headers=headers).status_code == 401
    assert client.get(PATH).status_code == 401
