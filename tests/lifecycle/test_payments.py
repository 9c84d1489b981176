"""Recording a payment (attended -> paid): commission from the agreement, event, visibility."""

from __future__ import annotations

import json
import uuid

import pytest
from sqlalchemy import text

from rehabref.events.sealing import event_body, event_data
from tests.conftest import auth
from tests.shapeg.bodies import g_referral
from tests.support.api import created, error_of
from tests.support.operators import OPS, move, moved, op_headers
from tests.support.partners import TEST_RING

BOOKING = {"scheduled_at": "2026-11-02T09:00:00Z", "care_mode": "remote"}


def _attended(client, token, key):
    referral = created(client, key)
    referral_id = referral["referral_id"]
    moved(client, token, referral_id, "assistant_started")
    moved(client, token, referral_id, "booked", appointment=BOOKING)
    moved(client, token, referral_id, "attended", reason="seen at home")
    return referral


def _event_data(sql, referral_id, event_type):
    with sql.connect() as conn:
        rows = conn.execute(
            text("SELECT data, body FROM events WHERE referral_id = :r AND type = :t"),
            {"r": referral_id, "t": event_type},
        ).all()
    assert len(rows) == 1
    data = event_data(TEST_RING, rows[0][0])
    assert json.loads(event_body(TEST_RING, rows[0][1]))["data"] == data
    return data


@pytest.mark.parametrize(
    ("agreement", "amount", "commission", "commission_status"),
    [
        ({"commission_bps": 1000}, 2_000_000, 200_000, "pending_settlement"),
        ({"commission_bps": 333}, 1_234_567, 41_111, "pending_settlement"),  # floor(41111.08)
        ({"commission_fixed_minor": 500_000}, 2_000_000, 500_000, "pending_settlement"),
        ({"commission_fixed_minor": 500_000}, 300_000, 300_000, "pending_settlement"),
        ({}, 2_000_000, 0, "not_eligible"),
    ],
)
def test_paid_records_commission_and_emits_spec_payload(
    client, make_partner, operator_token, sql, agreement, amount, commission, commission_status
):
    partner = make_partner(name="Pay Clinic", show_payments=True, **agreement)
    key = partner["keys"]["sk_test"]
    referral = _attended(client, operator_token, key)
    referral_id = referral["referral_id"]
    body = moved(
        client,
        operator_token,
        referral_id,
        "paid",
        payment={"amount_minor": amount, "currency": "NGN"},
    )
    payment = {
        "currency": "NGN",
        "amount_minor": amount,
        "partner_commission_minor": commission,
        "commission_status": commission_status,
    }
    assert body["payment"] == payment
    assert _event_data(sql, referral_id, "payment.completed") == {
        "referral_id": referral_id,
        "external_ref": referral["external_ref"],
        "status": "paid",
        "care_mode": "either",
        "payment": payment,
    }
    record = client.get(f"/api/v1/partners/referrals/{referral_id}", headers=auth(key)).json()
    assert record["status"] == "paid" and record["payment"] == payment
    assert record["next_action"] == "close_referral"


def test_shape_g_payment_completed_has_exactly_the_spec_fields(
    client, make_partner, operator_token, sql
):
    """Spec 6.2: the same five data fields for a Shape G referral (partner_reference as
    external_ref, the booked appointment's care_mode)."""
    partner = make_partner(
        name="Pay Hospital", contract="g", show_payments=True, commission_bps=500
    )
    key = partner["keys"]["sk_test"]
    body = g_referral(partner_reference=f"PAY-G-{uuid.uuid4().hex[:8]}")
    response = client.post(
        "/api/v1/partners/referrals", json=body, headers=auth(key, str(uuid.uuid4()))
    )
    assert response.status_code == 201, response.text
    referral_id = response.json()["referral_id"]
    moved(client, operator_token, referral_id, "assistant_started")
    moved(client, operator_token, referral_id, "booked", appointment=BOOKING)
    moved(client, operator_token, referral_id, "attended", reason="seen at home")
    moved(
        client,
        operator_token,
        referral_id,
        "paid",
        payment={"amount_minor": 2_000_000, "currency": "NGN"},
    )
    assert _event_data(sql, referral_id, "payment.completed") == {
        "referral_id": referral_id,
        "external_ref": body["partner_reference"],
        "status": "paid",
        "care_mode": "remote",
        "payment": {
            "currency": "NGN",
            "amount_minor": 2_000_000,
            "partner_commission_minor": 100_000,
            "commission_status": "pending_settlement",
        },
    }


def test_partner_without_show_payments_sees_no_amounts(client, make_partner, operator_token, sql):
    partner = make_partner(name="Quiet Clinic", show_payments=False, commission_bps=1000)
    key = partner["keys"]["sk_test"]
    referral_id = _attended(client, operator_token, key)["referral_id"]
    moved(
        client,
        operator_token,
        referral_id,
        "paid",
        payment={"amount_minor": 2_000_000, "currency": "NGN"},
    )
    record = client.get(f"/api/v1/partners/referrals/{referral_id}", headers=auth(key)).json()
    assert record["status"] == "paid" and record["payment"] is None
    data = _event_data(sql, referral_id, "payment.completed")
    assert data["status"] == "paid" and data["payment"] is None
    # The coordinator still sees what was recorded.
    ops = client.get(f"{OPS}/referrals/{referral_id}", headers=op_headers(operator_token)).json()
    assert ops["payment"]["partner_commission_minor"] == 200_000


def test_payment_validation_and_order(client, partner, operator_token):
    key = partner["keys"]["sk_test"]
    early = created(client, key)["referral_id"]
    error_of(
        move(
            client, operator_token, early, "paid", payment={"amount_minor": 100, "currency": "NGN"}
        ),
        409,
        "invalid_transition",
    )
    referral_id = _attended(client, operator_token, key)["referral_id"]
    error = error_of(move(client, operator_token, referral_id, "paid"), 422, "validation_error")
    assert "payment" in error["fields"]
    for bad, field in [
        ({"amount_minor": 0, "currency": "NGN"}, "payment.amount_minor"),
        ({"amount_minor": -5, "currency": "NGN"}, "payment.amount_minor"),
        ({"amount_minor": 10.5, "currency": "NGN"}, "payment.amount_minor"),
        ({"amount_minor": "100", "currency": "NGN"}, "payment.amount_minor"),
        ({"amount_minor": 3_000_000_000, "currency": "NGN"}, "payment.amount_minor"),
        ({"amount_minor": 100, "currency": "ngn"}, "payment.currency"),
    ]:
        error = error_of(
            move(client, operator_token, referral_id, "paid", payment=bad), 422, "validation_error"
        )
        assert field in error["fields"], (bad, error)
    moved(
        client, operator_token, referral_id, "paid", payment={"amount_minor": 1, "currency": "NGN"}
    )
    closed = moved(client, operator_token, referral_id, "closed")
    assert closed["allowed_transitions"] == []
