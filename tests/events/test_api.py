"""Webhook endpoints, event history, redelivery, ops views and the sandbox trigger over HTTP."""

from __future__ import annotations

import uuid

import pytest

from rehabref.events.catalogue import CLINICAL_KEYS, EVENT_TYPES
from rehabref.events.sealing import event_body
from tests.conftest import auth, count
from tests.events.conftest import register, trigger
from tests.support.operators import create_operator, op_headers
from tests.support.partners import TEST_RING
from tests.support.payloads import v1_referral

ENDPOINTS = "/api/v1/partners/webhook-endpoints"
EVENTS = "/api/v1/partners/events"
TRIGGER = "/api/v1/sandbox/trigger-webhook"


@pytest.fixture(scope="module")
def operator_token(database_url):
    return create_operator(database_url, "Webhook Coordinator")


def test_endpoint_crud_per_environment(client, partner):
    test_key, live_key = partner["keys"]["sk_test"], partner["keys"]["sk_live"]
    created = register(
        client,
        test_key,
        "http://127.0.0.1:9/hooks",
        enabled_events=["payment.completed", "referral.created", "payment.completed"],
    )
    assert created["endpoint_id"].startswith("whe_")
    assert created["environment"] == "test"
    assert created["enabled_events"] == ["payment.completed", "referral.created"]
    assert created["active"] is True
    live = register(client, live_key, "https://127.0.0.1:9/live")
    assert live["environment"] == "live" and live["enabled_events"] is None

    listed = client.get(ENDPOINTS, headers=auth(test_key)).json()
    assert [e["endpoint_id"] for e in listed["data"]] == [created["endpoint_id"]]
    assert listed["has_more"] is False and listed["next_cursor"] is None
    # the live key cannot see or delete the test endpoint
    gone = client.delete(f"{ENDPOINTS}/{created['endpoint_id']}", headers=auth(live_key))
    assert gone.status_code == 404
    deleted = client.delete(f"{ENDPOINTS}/{created['endpoint_id']}", headers=auth(test_key))
    assert deleted.status_code == 204
    assert client.get(ENDPOINTS, headers=auth(test_key)).json()["data"] == []
    again = client.delete(f"{ENDPOINTS}/{created['endpoint_id']}", headers=auth(test_key))
    assert again.status_code == 404


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"url": "ftp://example.com/x"}, "url"),
        ({"url": "http://127.0.0.1/x", "enabled_events": ["no.such"]}, "enabled_events"),
        ({"url": "http://127.0.0.1/x", "enabled_events": []}, "enabled_events"),
        ({}, "url"),
        ({"url": "http://127.0.0.1/x", "colour": "red"}, "colour"),
    ],
)
def test_endpoint_validation(client, partner, body, field):
    response = client.post(ENDPOINTS, json=body, headers=auth(partner["keys"]["sk_test"]))
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "validation_error"
    assert field in response.json()["error"]["fields"]


def test_live_endpoints_must_be_https(client, partner):
    response = client.post(
        ENDPOINTS, json={"url": "http://127.0.0.1/x"}, headers=auth(partner["keys"]["sk_live"])
    )
    assert response.status_code == 422
    assert "https" in response.json()["error"]["fields"]["url"]


def test_endpoint_auth_and_idempotency(client, partner):
    assert client.get(ENDPOINTS).status_code == 401
    pk = client.get(ENDPOINTS, headers=auth(partner["keys"]["pk_test"]))
    assert pk.status_code == 403
    key = partner["keys"]["sk_test"]
    first = client.post(ENDPOINTS, json={"url": "http://127.0.0.1:9/a"}, headers=auth(key, "e-1"))
    second = client.post(ENDPOINTS, json={"url": "http://127.0.0.1:9/a"}, headers=auth(key, "e-1"))
    assert first.status_code == second.status_code == 201
    assert first.json() == second.json()
    assert second.headers.get("Idempotent-Replayed") == "true"
    other = client.post(ENDPOINTS, json={"url": "http://127.0.0.1:9/b"}, headers=auth(key, "e-1"))
    assert other.status_code == 422
    assert len(client.get(ENDPOINTS, headers=auth(key)).json()["data"]) == 1


def test_events_are_delivered_only_to_subscribed_endpoints(client, partner, sql):
    key = partner["keys"]["sk_test"]
    all_types = register(client, key, "http://127.0.0.1:9/all")
    payments = register(client, key, "http://127.0.0.1:9/pay", enabled_events=["payment.completed"])
    created = client.post(
        "/api/v1/partners/referrals", json=v1_referral(), headers=auth(key, str(uuid.uuid4()))
    ).json()
    to_all = count(
        sql,
        "SELECT count(*) FROM deliveries d JOIN events e ON e.id = d.event_id "
        "WHERE e.referral_id = :r AND d.endpoint_id = :p",
        r=created["referral_id"],
        p=all_types["endpoint_id"],
    )
    to_payments = count(
        sql,
        "SELECT count(*) FROM deliveries WHERE endpoint_id = :p",
        p=payments["endpoint_id"],
    )
    assert (to_all, to_payments) == (1, 0)


def test_event_list_filters_detail_and_redeliver(client, partner):
    key = partner["keys"]["sk_test"]
    ids = [
        client.post(
            "/api/v1/partners/referrals",
            json=v1_referral(route="contact"),
            headers=auth(key, str(uuid.uuid4())),
        ).json()["referral_id"]
        for _ in range(2)
    ]
    page = client.get(EVENTS, params={"limit": 3}, headers=auth(key)).json()
    assert len(page["data"]) == 3 and page["has_more"] is True
    rest = client.get(EVENTS, params={"cursor": page["next_cursor"]}, headers=auth(key)).json()
    assert len(rest["data"]) == 1 and rest["has_more"] is False
    everything = page["data"] + rest["data"]
    assert [e["event_id"] for e in everything] == sorted(
        (e["event_id"] for e in everything), reverse=True
    )
    by_type = client.get(EVENTS, params={"type": "contact.requested"}, headers=auth(key)).json()
    assert {e["type"] for e in by_type["data"]} == {"contact.requested"}
    assert len(by_type["data"]) == 2
    by_referral = client.get(EVENTS, params={"referral_id": ids[0]}, headers=auth(key)).json()
    assert {e["referral_id"] for e in by_referral["data"]} == {ids[0]}
    bad = client.get(EVENTS, params={"type": "x.y", "limit": 0}, headers=auth(key))
    assert bad.status_code == 422 and set(bad.json()["error"]["fields"]) == {"type", "limit"}

    event_id = by_referral["data"][0]["event_id"]
    detail = client.get(f"{EVENTS}/{event_id}", headers=auth(key)).json()
    assert detail["deliveries"] == []  # no endpoint registered when it happened
    none = client.post(f"{EVENTS}/{event_id}/redeliver", headers=auth(key))
    assert none.status_code == 409 and none.json()["error"]["code"] == "no_webhook_target"
    endpoint = register(client, key, "http://127.0.0.1:9/later")
    queued = client.post(f"{EVENTS}/{event_id}/redeliver", headers=auth(key))
    assert queued.status_code == 202
    (delivery,) = queued.json()["deliveries"]
    assert delivery["target_url"] == "http://127.0.0.1:9/later"
    detail = client.get(f"{EVENTS}/{event_id}", headers=auth(key)).json()
    assert detail["deliveries"][0]["delivery_id"] == delivery["delivery_id"]
    assert detail["deliveries"][0]["endpoint_id"] == endpoint["endpoint_id"]
    assert detail["deliveries"][0]["state"] == "pending"
    # other partners and the other environment see nothing
    assert (
        client.get(f"{EVENTS}/{event_id}", headers=auth(partner["keys"]["sk_live"])).status_code
        == 404
    )
    assert client.get(f"{EVENTS}/evt_nope", headers=auth(key)).status_code == 404


def test_sandbox_trigger(client, partner, sql):
    key = partner["keys"]["sk_test"]
    for event_type in EVENT_TYPES:
        sent = trigger(client, key, event_type, "http://127.0.0.1:9/t")
        assert sent["event_id"].startswith("evt_") and sent["delivery_id"].startswith("dlv_")
        event = client.get(f"{EVENTS}/{sent['event_id']}", headers=auth(key)).json()
        assert event["type"] == event_type
        if event_type == "commission.settled":  # about a statement, not a referral
            assert event["data"]["statement_id"].startswith("cst_")
            assert "referral_id" not in event["data"]
        else:
            assert event["data"]["referral_id"].startswith("ref_")
        assert [d["target_url"] for d in event["deliveries"]] == ["http://127.0.0.1:9/t"]
    for forbidden in ("sk_live", "pk_test"):
        response = client.post(
            TRIGGER,
            json={"event": "referral.created", "target_url": "https://127.0.0.1/x"},
            headers=auth(partner["keys"][forbidden]),
        )
        assert response.status_code == 403, forbidden
    unknown = client.post(
        TRIGGER,
        json={"event": "referral.exploded", "target_url": "http://127.0.0.1:9/t"},
        headers=auth(key),
    )
    assert unknown.status_code == 422 and "event" in unknown.json()["error"]["fields"]
    missing = client.post(TRIGGER, json={"event": "referral.created"}, headers=auth(key))
    assert missing.status_code == 422 and "target_url" in missing.json()["error"]["fields"]


def test_payment_completed_payload_is_exactly_the_spec(client, make_partner):
    key = make_partner(name="Paid Clinic", show_payments=True)["keys"]["sk_test"]
    sent = trigger(client, key, "payment.completed", "http://127.0.0.1:9/t")
    data = client.get(f"{EVENTS}/{sent['event_id']}", headers=auth(key)).json()["data"]
    assert set(data) == {"referral_id", "external_ref", "status", "care_mode", "payment"}
    assert set(data["payment"]) == {
        "currency",
        "amount_minor",
        "partner_commission_minor",
        "commission_status",
    }
    assert isinstance(data["payment"]["amount_minor"], int)


def _keys(value):
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def test_data_boundary_no_clinical_content_for_v1_partners(client, make_partner, sql):
    v1 = make_partner(name="V1 Clinic", contract="v1")
    g = make_partner(name="G Clinic", contract="g")
    results = {}
    for name, who in (("v1", v1), ("g", g)):
        key = who["keys"]["sk_test"]
        sent = trigger(client, key, "session.completed", "http://127.0.0.1:9/t")
        results[name] = client.get(f"{EVENTS}/{sent['event_id']}", headers=auth(key)).json()
        with sql.connect() as conn:
            from sqlalchemy import text

            body = conn.execute(
                text("SELECT body FROM events WHERE id = :e"), {"e": sent["event_id"]}
            ).scalar_one()
        results[name]["stored_body"] = event_body(TEST_RING, body).decode()
    assert not _keys(results["v1"]["data"]) & CLINICAL_KEYS
    assert "pain_score_before" not in results["v1"]["stored_body"]
    assert "notes_summary" not in results["v1"]["stored_body"]
    assert results["v1"]["data"]["gps_check_in"]["verified"] is True
    assert results["g"]["data"]["clinical_summary"]["pain_score_before"] == 7
    assert "partner_reference" in results["g"]["data"]


def test_ops_views_across_partners(client, make_partner, operator_token):
    one, two = make_partner(name="Ops One"), make_partner(name="Ops Two")
    sent_one = trigger(client, one["keys"]["sk_test"], "referral.created", "http://127.0.0.1:9/o")
    sent_two = trigger(client, two["keys"]["sk_test"], "referral.closed", "http://127.0.0.1:9/o")
    ops = op_headers(operator_token)
    listed = client.get("/api/v1/ops/events", params={"limit": 100}, headers=ops).json()
    seen = {e["event_id"]: e for e in listed["data"]}
    assert seen[sent_one["event_id"]]["partner_id"] == one["partner_id"]
    assert seen[sent_two["event_id"]]["partner_id"] == two["partner_id"]
    only_two = client.get(
        "/api/v1/ops/events", params={"partner_id": two["partner_id"]}, headers=ops
    ).json()
    assert [e["event_id"] for e in only_two["data"]] == [sent_two["event_id"]]
    detail = client.get(f"/api/v1/ops/events/{sent_one['event_id']}", headers=ops).json()
    assert detail["deliveries"][0]["delivery_id"] == sent_one["delivery_id"]
    again = client.post(f"/api/v1/ops/events/{sent_one['event_id']}/redeliver", headers=ops)
    assert again.status_code == 202
    assert again.json()["deliveries"][0]["target_url"] == "http://127.0.0.1:9/o"
    pending = client.get(
        "/api/v1/ops/deliveries",
        params={"state": "pending", "partner_id": one["partner_id"]},
        headers=ops,
    ).json()
    assert {d["event_id"] for d in pending["data"]} == {sent_one["event_id"]}
    assert len(pending["data"]) == 2
    failed = client.get("/api/v1/ops/deliveries", params={"state": "failed"}, headers=ops)
    assert failed.status_code == 200
    assert (
        client.get("/api/v1/ops/deliveries", params={"state": "x"}, headers=ops).status_code == 422
    )
    # partner keys never reach the ops API
    partner_key = auth(one["keys"]["sk_test"])
    assert client.get("/api/v1/ops/events", headers=partner_key).status_code == 401
    assert client.get("/api/v1/ops/deliveries", headers=partner_key).status_code == 401


def test_redeliver_honours_an_idempotency_key(client, partner):
    key = partner["keys"]["sk_test"]
    register(client, key, "http://127.0.0.1:9/retry-safe")
    ids = [
        client.post(
            "/api/v1/partners/referrals", json=v1_referral(), headers=auth(key, str(uuid.uuid4()))
        ).json()["referral_id"]
        for _ in range(2)
    ]
    first, second = (
        client.get(EVENTS, params={"referral_id": i}, headers=auth(key)).json()["data"][0][
            "event_id"
        ]
        for i in ids
    )
    retry_key = f"redeliver-{uuid.uuid4()}"
    queued = client.post(f"{EVENTS}/{first}/redeliver", headers=auth(key, retry_key))
    assert queued.status_code == 202 and "idempotent-replayed" not in queued.headers
    again = client.post(f"{EVENTS}/{first}/redeliver", headers=auth(key, retry_key))
    assert again.status_code == 202 and again.headers["idempotent-replayed"] == "true"
    assert again.content == queued.content
    # One delivery from the create, one from the redeliver: the retry queued nothing.
    detail = client.get(f"{EVENTS}/{first}", headers=auth(key)).json()
    assert len(detail["deliveries"]) == 2
    # The same key for another event is a reuse.
    reused = client.post(f"{EVENTS}/{second}/redeliver", headers=auth(key, retry_key))
    assert reused.status_code == 422
    assert reused.json()["error"]["code"] == "idempotency_key_reused"
    # Without a key every call queues again, as before.
    assert client.post(f"{EVENTS}/{first}/redeliver", headers=auth(key)).status_code == 202
    detail = client.get(f"{EVENTS}/{first}", headers=auth(key)).json()
    assert len(detail["deliveries"]) == 3
