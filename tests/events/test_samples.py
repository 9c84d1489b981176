"""Sandbox trigger samples carry the same data fields as the real events they imitate."""

from __future__ import annotations

import uuid

import pytest

from rehabref.care.sessions import pain_reduction
from tests.conftest import auth
from tests.events.conftest import trigger
from tests.shapeg.bodies import g_referral
from tests.support.payloads import v1_referral

EVENTS = "/api/v1/partners/events"


def _real_event(client, key, body, event_type):
    response = client.post(
        "/api/v1/partners/referrals", json=body, headers=auth(key, str(uuid.uuid4()))
    )
    assert response.status_code == 201, response.text
    referral_id = response.json()["referral_id"]
    listed = client.get(
        EVENTS, params={"referral_id": referral_id, "type": event_type}, headers=auth(key)
    ).json()["data"]
    assert len(listed) == 1
    return client.get(f"{EVENTS}/{listed[0]['event_id']}", headers=auth(key)).json()["data"]


def _sample(client, key, event_type):
    sent = trigger(client, key, event_type, "http://127.0.0.1:9/sample")
    return client.get(f"{EVENTS}/{sent['event_id']}", headers=auth(key)).json()["data"]


@pytest.mark.parametrize(
    ("contract", "event_type", "route"),
    [
        ("v1", "referral.created", "assistant"),
        ("v1", "contact.requested", "contact"),
        ("g", "referral.created", None),
    ],
)
def test_sample_has_the_fields_of_the_real_event(client, make_partner, contract, event_type, route):
    key = make_partner(name=f"Sample {contract}", contract=contract)["keys"]["sk_test"]
    body = g_referral() if contract == "g" else v1_referral(route=route)
    real = _real_event(client, key, body, event_type)
    sample = _sample(client, key, event_type)
    assert set(sample) == set(real)
    if "contact_task_id" in real:
        assert sample["contact_task_id"].split("_")[0] == real["contact_task_id"].split("_")[0]


def test_session_completed_sample_pain_reduction_has_the_real_shape(client, make_partner):
    key = make_partner(name="Sample clinical", contract="g")["keys"]["sk_test"]
    summary = _sample(client, key, "session.completed")["clinical_summary"]
    expected = pain_reduction(summary["pain_score_before"], summary["pain_score_after"])
    assert summary["pain_reduction"] == expected


@pytest.mark.parametrize("show_payments", [True, False])
def test_payment_completed_sample_follows_the_agreement(client, make_partner, show_payments):
    key = make_partner(name="Sample payer", show_payments=show_payments)["keys"]["sk_test"]
    payment = _sample(client, key, "payment.completed")["payment"]
    if show_payments:
        assert payment["commission_status"] == "pending_settlement"
    else:
        assert payment is None
