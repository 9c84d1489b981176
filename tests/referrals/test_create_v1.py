"""Creating Shape V1 referrals over HTTP against a real server."""

from __future__ import annotations

import uuid

from tests.conftest import auth, count
from tests.support.payloads import v1_referral


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
