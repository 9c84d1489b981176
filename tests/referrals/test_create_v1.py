"""Creating Shape V1 referrals over HTTP against a real server."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from rehabref.instance_secret import SecretBox
from rehabref.intake.service import assistant_token
from tests.conftest import auth, count
from tests.support.api import CREATE_PATHS, REFERRALS, bearer, create, created
from tests.support.partners import TEST_SECRET_KEY
from tests.support.payloads import v1_referral
from tests.support.rows import update_rows


def test_assistant_route_returns_short_lived_session_url(client, partner, sql):
    key = partner["keys"]["sk_test"]
    body = v1_referral(route="assistant")
    response = client.post("/api/v1/partners/referrals", json=body, headers=auth(key, "k-1"))
    assert response.status_code == 201, response.text
    created = response.json()
    assert created["referral_id"].startswith("ref_")
    assert created["external_ref"] == body["external_ref"]
    assert created["status"] == "received"
    assert created["next_action"] == "start_assistant"
    assert created["assistant_session_url"].startswith(
        client.base_url.__str__().rstrip("/") + "/a/"
    )
    assert created["created_at"].endswith("Z")
    events = count(
        sql, "SELECT count(*) FROM events WHERE referral_id = :r", r=created["referral_id"]
    )
    assert events == 1


def test_contact_route_queues_a_contact_task(client, partner, sql):
    key = partner["keys"]["sk_test"]
    response = client.post(
        "/v1/partner/referrals", json=v1_referral(route="contact"), headers=auth(key, "k-2")
    )
    assert response.status_code == 201, response.text
    created = response.json()
    assert created["status"] == "contact_pending"
    assert created["assistant_session_url"] is None
    referral_id = created["referral_id"]
    assert (
        count(sql, "SELECT count(*) FROM contact_tasks WHERE referral_id = :r", r=referral_id) == 1
    )
    types = count(
        sql,
        "SELECT count(*) FROM events WHERE referral_id = :r AND type = 'contact.requested'",
        r=referral_id,
    )
    assert types == 1


def test_invalid_phone_is_a_field_level_422(client, partner):
    body = v1_referral()
    body["patient"]["phone"] = "0803 123 4567"
    response = client.post(
        "/api/v1/partners/referrals",
        json=body,
        headers={**auth(partner["keys"]["sk_test"], str(uuid.uuid4())), "X-Request-ID": "trace-1"},
    )
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert "E.164" in error["fields"]["patient.phone"]
    assert error["request_id"] == "trace-1" == response.headers["x-request-id"]


@pytest.mark.parametrize("path", CREATE_PATHS)
@pytest.mark.parametrize("route", ["assistant", "contact"])
def test_response_is_exactly_the_2_3_body_on_both_paths(client, partner, path, route):
    body = v1_referral(route=route, care_mode="remote")
    before = datetime.now(UTC) - timedelta(seconds=5)
    response = create(client, partner["keys"]["sk_test"], body, path=path)
    assert response.status_code == 201, response.text
    assert response.headers["content-type"] == "application/json"
    answer = response.json()
    assert set(answer) == {
        "referral_id",
        "external_ref",
        "status",
        "care_mode",
        "next_action",
        "assistant_session_url",
        "created_at",
    }
    assert re.fullmatch(r"ref_[0-9a-z]{26}", answer["referral_id"])
    assert answer["external_ref"] == body["external_ref"]
    assert answer["care_mode"] == "remote"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", answer["created_at"])
    assert before <= datetime.fromisoformat(answer["created_at"]) <= datetime.now(UTC)
    if route == "assistant":
        assert answer["status"] == "received"
        assert answer["next_action"] == "start_assistant"
        assert answer["assistant_session_url"].startswith(f"{client.base_url}/a/")
    else:
        assert answer["status"] == "contact_pending"
        assert answer["next_action"] == "await_contact"
        assert answer["assistant_session_url"] is None


def test_both_paths_create_the_same_kind_of_record(client, partner):
    key = partner["keys"]["sk_test"]
    first = create(client, key, path=CREATE_PATHS[0]).json()
    second = create(client, key, path=CREATE_PATHS[1]).json()
    records = [
        client.get(f"{REFERRALS}/{item['referral_id']}", headers=bearer(key)).json()
        for item in (first, second)
    ]
    ignore = {"referral_id", "external_ref", "created_at", "updated_at"}
    assert [{k: v for k, v in r.items() if k not in ignore} for r in records] == [
        {k: v for k, v in records[0].items() if k not in ignore}
    ] * 2


def test_assistant_session_url_opens_the_patients_page(client, partner):
    created_body = created(client, partner["keys"]["sk_test"], route="assistant")
    page = client.get(created_body["assistant_session_url"])
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["cache-control"] == "no-store"
    assert page.headers["referrer-policy"] == "no-referrer"


@pytest.mark.parametrize(
    "tamper",
    [
        lambda token: token[:-1] + ("A" if token[-1] != "A" else "B"),  # signature
        lambda token: token.replace(".", ".9", 1),  # expiry pushed out
        lambda token: "ast_" + "0" * 26 + token[30:],  # another session id
        lambda token: token.split(".")[0],  # signature removed
        lambda token: "not-a-token",
    ],
)
def test_tampered_assistant_token_is_refused(client, partner, tamper):
    url = created(client, partner["keys"]["sk_test"])["assistant_session_url"]
    base, token = url.rsplit("/", 1)
    page = client.get(f"{base}/{tamper(token)}")
    assert page.status_code == 404
    assert "Amaka" not in page.text


def test_expired_assistant_session_shows_an_expiry_page(client, partner, sql):
    body = created(client, partner["keys"]["sk_test"])
    update_rows(
        sql,
        "assistant_sessions",
        {"referral_id": body["referral_id"]},
        expires_at=datetime.now(UTC) - timedelta(minutes=1),
    )
    page = client.get(body["assistant_session_url"])
    assert page.status_code == 410
    assert "Amaka" not in page.text


def test_assistant_token_is_not_stored_with_the_referral_or_its_events(client, partner, sql):
    # The token is checked by signature; only the idempotency record keeps the 201 body
    # (it must replay it byte for byte) and it expires with the key after 24 h.
    body = created(client, partner["keys"]["sk_test"])
    signature = body["assistant_session_url"].rsplit(".", 1)[1]
    with sql.connect() as conn:
        for table in ("referrals", "assistant_sessions", "events", "referral_transitions"):
            rows = conn.execute(text(f"SELECT * FROM {table}")).all()
            assert signature not in " ".join(str(value) for row in rows for value in row), table


def test_referral_created_event_is_written_in_the_same_transaction(client, partner, sql):
    body = created(client, partner["keys"]["sk_test"], route="contact")
    with sql.connect() as conn:
        rows = conn.execute(
            text("SELECT type, partner_id, environment FROM events WHERE referral_id = :r"),
            {"r": body["referral_id"]},
        ).all()
    assert sorted(row.type for row in rows) == ["contact.requested", "referral.created"]
    assert {(row.partner_id, row.environment) for row in rows} == {(partner["partner_id"], "test")}


def test_live_key_creates_live_referrals(client, partner, sql):
    body = created(client, partner["keys"]["sk_live"])
    with sql.connect() as conn:
        environment = conn.execute(
            text("SELECT environment FROM referrals WHERE id = :r"), {"r": body["referral_id"]}
        ).scalar_one()
    assert environment == "live"


def test_a_validly_signed_but_expired_token_shows_the_expiry_page(client, partner):
    url = created(client, partner["keys"]["sk_test"])["assistant_session_url"]
    base, token = url.rsplit("/", 1)
    session_id = token.split(".")[0]
    box = SecretBox(TEST_SECRET_KEY)
    stale = assistant_token(box, session_id=session_id, expires_at=datetime.now(UTC) - timedelta(1))
    page = client.get(f"{base}/{stale}")
    assert page.status_code == 410
    assert "Amaka" not in page.text
    # The same session with a fresh signature still opens: only the expiry differed.
    fresh = assistant_token(box, session_id=session_id, expires_at=datetime.now(UTC) + timedelta(1))
    assert client.get(f"{base}/{fresh}").status_code == 200
