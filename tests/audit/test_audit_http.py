"""The audit trail over real HTTP: what partner and ops calls record, and the admin listing."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text, update

from rehabref.audit.verify import verify_chain
from rehabref.db import Database, table
from rehabref.tables.operators import Operator
from tests.audit.operators import create
from tests.conftest import auth
from tests.shapeg.bodies import g_referral
from tests.support.operators import OPS, op_headers
from tests.support.payloads import v1_referral

AUDIT = f"{OPS}/audit-events"
_operators = table(Operator)


@pytest.fixture(scope="module")
def admin(database_url):
    return create(database_url, "--role", "admin")


@pytest.fixture(scope="module")
def coordinator(database_url):
    return create(database_url)


def _records(sql, referral_id):
    with sql.connect() as conn:
        return conn.execute(
            text(
                "SELECT actor_kind, actor_id, action, referral_id, subject, request_id "
                "FROM audit_events WHERE referral_id = :r ORDER BY at, id"
            ),
            {"r": referral_id},
        ).all()


def _created(client, partner):
    body = v1_referral(route="contact")
    response = client.post(
        "/api/v1/partners/referrals",
        json=body,
        headers=auth(partner["keys"]["sk_test"], body["external_ref"]),
    )
    assert response.status_code == 201, response.text
    return response


def test_partner_create_and_reads_are_recorded_without_patient_data(client, partner, sql):
    created = _created(client, partner)
    referral_id = created.json()["referral_id"]
    key = partner["keys"]["sk_test"]
    read = client.get(f"/api/v1/partners/referrals/{referral_id}", headers=auth(key))
    assert read.status_code == 200
    rows = _records(sql, referral_id)
    assert [row.action for row in rows] == ["referral.created", "referral.read"]
    assert {row.actor_kind for row in rows} == {"partner"}
    assert all(row.actor_id.startswith(partner["partner_id"] + ":") for row in rows)
    assert rows[0].request_id == created.headers["x-request-id"]
    assert rows[1].request_id == read.headers["x-request-id"]
    flat = " ".join(str(value) for row in rows for value in row)
    for patient_data in ("Amaka", "+2348031234567", "2348031234567", "Lagos", "back pain"):
        assert patient_data not in flat
    # A list is one record, without a referral.
    listed = client.get("/api/v1/partners/referrals?limit=1", headers=auth(key))
    assert listed.status_code == 200
    with sql.connect() as conn:
        listing = conn.execute(
            text("SELECT action, referral_id FROM audit_events WHERE request_id = :r"),
            {"r": listed.headers["x-request-id"]},
        ).one()
    assert tuple(listing) == ("referrals.listed", None)


def test_a_read_that_fails_is_not_recorded(client, partner, sql):
    missing = client.get(
        "/api/v1/partners/referrals/ref_doesnotexist", headers=auth(partner["keys"]["sk_test"])
    )
    assert missing.status_code == 404
    with sql.connect() as conn:
        found = conn.execute(
            text("SELECT count(*) FROM audit_events WHERE request_id = :r"),
            {"r": missing.headers["x-request-id"]},
        ).scalar()
    assert found == 0


def test_ops_reads_and_moves_are_recorded_in_the_move_transaction(
    client, partner, sql, coordinator
):
    referral_id = _created(client, partner).json()["referral_id"]
    token = coordinator["token"]
    assert (
        client.get(f"{OPS}/referrals/{referral_id}", headers=op_headers(token)).status_code == 200
    )
    illegal = client.post(
        f"{OPS}/referrals/{referral_id}/transitions", json={"to": "paid"}, headers=op_headers(token)
    )
    assert illegal.status_code == 409
    moved = client.post(
        f"{OPS}/referrals/{referral_id}/transitions",
        json={"to": "cancelled", "reason": "patient declined"},
        headers=op_headers(token),
    )
    assert moved.status_code == 200, moved.text
    rows = _records(sql, referral_id)
    assert [row.action for row in rows] == ["referral.created", "referral.read", "referral.moved"]
    assert rows[2].actor_kind == "operator"
    assert rows[2].actor_id == coordinator["operator_id"]
    assert rows[2].request_id == moved.headers["x-request-id"]


def test_admins_list_the_trail_with_filters_and_pages(client, partner, admin):
    referral_id = _created(client, partner).json()["referral_id"]
    key = partner["keys"]["sk_test"]
    for _ in range(2):
        client.get(f"/api/v1/partners/referrals/{referral_id}", headers=auth(key))
    headers = op_headers(admin["token"])
    first = client.get(AUDIT, params={"referral_id": referral_id, "limit": 2}, headers=headers)
    assert first.status_code == 200, first.text
    page = first.json()
    assert set(page) == {"data", "has_more", "next_cursor"}
    assert [item["action"] for item in page["data"]] == ["referral.read", "referral.read"]
    assert page["has_more"] is True
    assert page["data"][0]["at"] >= page["data"][1]["at"]  # newest first
    rest = client.get(
        AUDIT,
        params={"referral_id": referral_id, "limit": 2, "cursor": page["next_cursor"]},
        headers=headers,
    ).json()
    assert [item["action"] for item in rest["data"]] == ["referral.created"]
    assert rest["has_more"] is False and rest["next_cursor"] is None
    by_actor = client.get(
        AUDIT, params={"actor_id": rest["data"][0]["actor_id"]}, headers=headers
    ).json()
    assert by_actor["data"] and all(
        item["actor_id"] == rest["data"][0]["actor_id"] for item in by_actor["data"]
    )
    future = (datetime.now(UTC) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert client.get(AUDIT, params={"since": future}, headers=headers).json()["data"] == []
    # Listing the trail is on the trail too.
    listed = client.get(AUDIT, params={"actor_id": admin["operator_id"]}, headers=headers)
    assert any(item["action"] == "audit_events.listed" for item in listed.json()["data"])


@pytest.mark.parametrize(
    "params",
    [
        {"since": "yesterday"},
        {"since": "2026-01-01T00:00:00"},
        {"limit": "0"},
        {"limit": "101"},
        {"cursor": "bogus"},
        {"referral_id": "x" * 101},
        {"actor_id": "a b"},
        {"referral_id": "ref_\u00e9"},
    ],
)
def test_bad_query_values_are_422_with_the_error_body(client, admin, params):
    response = client.get(AUDIT, params=params, headers=op_headers(admin["token"]))
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert set(error["fields"]) == set(params)
    assert error["request_id"] == response.headers["x-request-id"]


def test_only_admins_read_the_trail(client, partner, coordinator):
    refused = client.get(AUDIT, headers=op_headers(coordinator["token"]))
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "forbidden"
    assert client.get(AUDIT, headers=auth(partner["keys"]["sk_test"])).status_code == 401
    assert client.get(AUDIT).status_code == 401


def test_an_expired_operator_token_is_401(client, database_url, sql):
    made = create(database_url, "--role", "admin", "--expires-in-days", "1")
    headers = op_headers(made["token"])
    assert client.get(AUDIT, headers=headers).status_code == 200
    with sql.begin() as conn:
        conn.execute(
            update(_operators)
            .where(_operators.c.id == made["operator_id"])
            .values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )
    expired = client.get(AUDIT, headers=headers)
    assert expired.status_code == 401
    assert expired.json()["error"]["code"] == "unauthenticated"
    assert client.get(f"{OPS}/referrals", headers=headers).status_code == 401


def test_the_chain_is_intact_after_the_calls_above(database_url):
    async def work():
        db = Database(database_url, pool_size=1)
        try:
            async with db.read() as conn:
                return await verify_chain(conn)
        finally:
            await db.dispose()

    verdict = asyncio.run(work())
    assert verdict.intact, verdict
    assert verdict.checked > 0


def test_operators_create_refuses_a_bad_role_or_expiry(database_url):
    from tests.audit.operators import cli

    assert cli(database_url, "operators", "create", "--name", "X", "--role", "root").returncode == 2
    assert (
        cli(database_url, "operators", "create", "--name", "X", "--expires-in-days", "0").returncode
        == 2
    )


def test_a_refused_create_leaves_no_record(client, partner, sql):
    first = _created(client, partner)
    body = v1_referral(route="contact", external_ref=None)
    body["external_ref"] = _external_ref_of(sql, first.json()["referral_id"])
    duplicate = client.post(
        "/api/v1/partners/referrals",
        json=body,
        headers=auth(partner["keys"]["sk_test"], "another-key-" + body["external_ref"]),
    )
    assert duplicate.status_code == 409, duplicate.text
    with sql.connect() as conn:
        written = conn.execute(
            text("SELECT count(*) FROM audit_events WHERE request_id = :r"),
            {"r": duplicate.headers["x-request-id"]},
        ).scalar()
    assert written == 0


def _external_ref_of(sql, referral_id):
    with sql.connect() as conn:
        return conn.execute(
            text("SELECT external_ref FROM referrals WHERE id = :id"), {"id": referral_id}
        ).scalar_one()


def test_a_shape_g_read_by_code_or_reference_records_the_referral_id(client, make_partner, sql):
    key = make_partner(contract="g")["keys"]["sk_test"]
    created = client.post("/api/v1/partners/referrals", json=g_referral(), headers=auth(key))
    assert created.status_code == 201, created.text
    referral = created.json()
    for ident in (referral["tracking_code"], referral["partner_reference"]):
        read = client.get(f"/api/v1/partners/referrals/{ident}", headers=auth(key))
        assert read.status_code == 200
        with sql.connect() as conn:
            recorded = conn.execute(
                text("SELECT referral_id, subject FROM audit_events WHERE request_id = :r"),
                {"r": read.headers["x-request-id"]},
            ).one()
        # The partner's own reference is free text: the append-only trail keeps ids only.
        assert tuple(recorded) == (referral["referral_id"], None)
