"""Card payments end to end against the Paystack stand-in, on SQLite and PostgreSQL: the
self-pay journey to ``payment.completed`` with the agreed commission, forged and repeated
webhooks (many at once), amount mismatch, payment before attendance, refunds."""

from __future__ import annotations

import json
import threading
from typing import Any
from urllib.parse import urlsplit

import httpx

from rehabref.events.sealing import event_data
from tests.billing.conftest import ask_payment, initialized, move, referral_at, rows, wait_for
from tests.support.api import error_of
from tests.support.partners import TEST_RING
from tests.support.paystack_api import paystack_signature
from tests.support.twilio_api import TwilioApi


def _events(sql: Any, referral_id: str, event_type: str) -> list[dict[str, Any]]:
    found = rows(
        sql,
        "SELECT data FROM events WHERE referral_id = :r AND type = :t ORDER BY id",
        r=referral_id,
        t=event_type,
    )
    return [event_data(TEST_RING, r.data) for r in found]


def _status(api: httpx.Client, key: str, referral_id: str) -> str:
    response = api.get(
        f"/api/v1/partners/referrals/{referral_id}", headers={"Authorization": f"Bearer {key}"}
    )
    return str(response.json()["status"])


def _deliver(api: httpx.Client, paystack: Any, raw: bytes) -> httpx.Response:
    return api.post("/webhooks/paystack", content=raw, headers=paystack.signed(raw))


def _paid_request(api, paystack, sql, operator_token, key, amount=2_000_000):
    referral = referral_at(api, operator_token, key, "attended")
    created = ask_payment(api, operator_token, referral["referral_id"], amount)
    assert created.status_code == 201, created.text
    reference = initialized(sql, created.json()["payment_request_id"])
    return referral, created.json(), reference


def test_self_pay_journey_to_payment_completed_with_the_agreed_commission(
    api, paystack, twilio: TwilioApi, sql, make_partner, operator_token
):
    partner = make_partner(name="Pay Clinic", show_payments=True, commission_bps=1000)
    key = partner["keys"]["sk_live"]
    referral = referral_at(api, operator_token, key, "attended")
    referral_id = referral["referral_id"]

    created = ask_payment(api, operator_token, referral_id, 2_000_000)
    assert created.status_code == 201, created.text
    body = created.json()
    assert set(body) == {
        "payment_request_id",
        "reference",
        "authorization_url",
        "status",
        "amount_minor",
        "currency",
        "expires_at",
    }
    assert body["status"] == "pending"
    assert (body["amount_minor"], body["currency"]) == (2_000_000, "NGN")
    assert body["authorization_url"].startswith(f"{api.base_url}/pay/")

    # The worker initializes the transaction with Paystack: our reference, the amount in
    # kobo, the placeholder e-mail (the patient gave none), our ids only as metadata.
    reference = initialized(sql, body["payment_request_id"])
    assert reference == body["reference"]
    sent = [r for r in paystack.requests if r.path == "/transaction/initialize"]
    init = next(r.json() for r in sent if r.json()["reference"] == reference)
    assert init == {
        "email": f"{referral_id}@patients.rehabref.invalid",
        "amount": 2_000_000,
        "currency": "NGN",
        "reference": reference,
        "callback_url": body["authorization_url"],
        "metadata": {"referral_id": referral_id, "payment_request_id": body["payment_request_id"]},
    }

    # The patient gets the link by SMS; it leads to Paystack's checkout.
    texts = wait_for(
        lambda: [
            r.form()["Body"][0]
            for r in list(twilio.requests)
            if r.form().get("To") == [referral["phone"]]
            and body["authorization_url"] in r.form()["Body"][0]
        ],
        what="the payment link SMS",
    )
    assert "NGN 20,000.00" in texts[0]
    page = api.get(urlsplit(body["authorization_url"]).path)
    assert page.status_code == 303
    assert page.headers["location"].startswith("https://checkout.paystack.com/")

    # Paid: Paystack's webhook, verified, moves the referral attended -> paid.
    raw = paystack.charge(reference)
    verifies_before = sum(1 for r in paystack.requests if r.method == "GET")
    answer = _deliver(api, paystack, raw)
    assert answer.status_code == 200, answer.text
    assert answer.json()["outcome"] == "applied"
    assert sum(1 for r in paystack.requests if r.method == "GET") == verifies_before + 1
    assert _status(api, key, referral_id) == "paid"
    payment = {
        "currency": "NGN",
        "amount_minor": 2_000_000,
        "partner_commission_minor": 200_000,
        "commission_status": "pending_settlement",
    }
    assert _events(sql, referral_id, "payment.completed") == [
        {
            "referral_id": referral_id,
            "external_ref": referral["external_ref"],
            "status": "paid",
            "care_mode": "either",
            "payment": payment,
        }
    ]
    stored = rows(sql, "SELECT state, provider FROM payments WHERE reference = :r", r=reference)
    assert [(s.state, s.provider) for s in stored] == [("applied", "paystack")]
    done = api.get(urlsplit(body["authorization_url"]).path)
    assert done.status_code == 200 and "Payment received" in done.text


def test_forged_webhooks_are_refused_before_anything_is_recorded(
    api, paystack, sql, make_partner, operator_token
):
    key = make_partner(name="Forge Clinic", commission_bps=500)["keys"]["sk_live"]
    referral, _, reference = _paid_request(api, paystack, sql, operator_token, key)
    raw = paystack.charge(reference)
    wrong = paystack_signature("not-the-secret", raw)
    garbled = "zz\u00e9".encode()
    for headers in ({"x-paystack-signature": wrong}, {}, {"x-paystack-signature": garbled}):
        refused = api.post("/webhooks/paystack", content=raw, headers=headers)
        error_of(refused, 401, "unauthenticated")
    # A validly signed body with one byte changed is forged too.
    tampered = raw.replace(b'"amount": 2000000', b'"amount": 2000001')
    error_of(
        api.post("/webhooks/paystack", content=tampered, headers=paystack.signed(raw)),
        401,
        "unauthenticated",
    )
    assert rows(sql, "SELECT id FROM payments WHERE reference = :r", r=reference) == []
    assert _status(api, key, referral["referral_id"]) == "attended"


def test_many_deliveries_of_one_charge_at_once_make_one_payment_and_one_event(
    api, paystack, sql, make_partner, operator_token, pay_server
):
    key = make_partner(name="Twice Clinic", commission_bps=1000)["keys"]["sk_live"]
    referral, _, reference = _paid_request(api, paystack, sql, operator_token, key)
    raw = paystack.charge(reference)
    answers: list[int] = []
    outcomes: list[str] = []
    barrier = threading.Barrier(12)

    def deliver() -> None:
        with httpx.Client(base_url=pay_server.base_url, timeout=30) as client:
            barrier.wait()
            response = _deliver(client, paystack, raw)
            answers.append(response.status_code)
            outcomes.append(response.json().get("outcome", ""))

    threads = [threading.Thread(target=deliver) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [200] * 12
    assert sorted(outcomes).count("applied") == 1
    assert set(outcomes) == {"applied", "duplicate"}
    assert len(rows(sql, "SELECT id FROM payments WHERE reference = :r", r=reference)) == 1
    assert len(_events(sql, referral["referral_id"], "payment.completed")) == 1
    # And once more, later: still one.
    assert _deliver(api, paystack, raw).json()["outcome"] == "duplicate"


def test_an_amount_that_differs_is_held_for_a_coordinator_never_paid(
    api, paystack, sql, make_partner, operator_token
):
    key = make_partner(name="Short Clinic", commission_bps=1000)["keys"]["sk_live"]
    referral, _, reference = _paid_request(api, paystack, sql, operator_token, key)
    # The event claims the full amount; Paystack's verify says 5,000 was charged.
    raw = paystack.charge(reference, amount=500_000)
    answer = _deliver(api, paystack, raw)
    assert answer.json()["outcome"] == "held"
    referral_id = referral["referral_id"]
    assert _status(api, key, referral_id) == "attended"
    assert _events(sql, referral_id, "payment.completed") == []
    held = rows(
        sql,
        "SELECT state, hold_reason, amount_minor FROM payments WHERE reference = :r",
        r=reference,
    )
    assert [(h.state, h.hold_reason, h.amount_minor) for h in held] == [
        ("held", "amount_mismatch", 500_000)
    ]
    tasks = rows(sql, "SELECT purpose FROM contact_tasks WHERE referral_id = :r", r=referral_id)
    assert "payment_review" in [t.purpose for t in tasks]


def test_a_payment_before_attendance_is_held_and_applied_when_attended(
    api, paystack, sql, make_partner, operator_token
):
    key = make_partner(name="Early Clinic", show_payments=True, commission_fixed_minor=150_000)[
        "keys"
    ]["sk_live"]
    referral = referral_at(api, operator_token, key, "booked")
    referral_id = referral["referral_id"]
    created = ask_payment(api, operator_token, referral_id, 1_000_000)
    reference = initialized(sql, created.json()["payment_request_id"])
    answer = _deliver(api, paystack, paystack.charge(reference))
    assert answer.json()["outcome"] == "held"
    assert _status(api, key, referral_id) == "booked"
    assert _events(sql, referral_id, "payment.completed") == []

    attended = move(api, operator_token, referral_id, "attended", reason="seen at home")
    assert attended.status_code == 200, attended.text
    assert attended.json()["status"] == "paid"
    assert len(_events(sql, referral_id, "appointment.attended")) == 1
    [completed] = _events(sql, referral_id, "payment.completed")
    assert completed["payment"] == {
        "currency": "NGN",
        "amount_minor": 1_000_000,
        "partner_commission_minor": 150_000,
        "commission_status": "pending_settlement",
    }
    applied = rows(sql, "SELECT state FROM payments WHERE reference = :r", r=reference)
    assert [a.state for a in applied] == ["applied"]


def test_a_payment_waiting_for_a_visit_that_is_cancelled_goes_to_a_coordinator(
    api, paystack, sql, make_partner, operator_token
):
    key = make_partner(name="Cancel Clinic", commission_bps=1000)["keys"]["sk_live"]
    referral = referral_at(api, operator_token, key, "booked")
    referral_id = referral["referral_id"]
    created = ask_payment(api, operator_token, referral_id, 1_000_000)
    reference = initialized(sql, created.json()["payment_request_id"])
    assert _deliver(api, paystack, paystack.charge(reference)).json()["outcome"] == "held"
    assert move(api, operator_token, referral_id, "cancelled").status_code == 200
    held = rows(sql, "SELECT state, hold_reason FROM payments WHERE reference = :r", r=reference)
    assert [(h.state, h.hold_reason) for h in held] == [("held", "referral_status")]
    tasks = rows(sql, "SELECT purpose FROM contact_tasks WHERE referral_id = :r", r=referral_id)
    assert "payment_review" in [t.purpose for t in tasks]
    assert _events(sql, referral_id, "payment.completed") == []


def test_a_refund_is_recorded_once_and_the_partner_told(
    api, paystack, sql, make_partner, operator_token
):
    key = make_partner(name="Refund Clinic", show_payments=True, commission_bps=1000)["keys"][
        "sk_live"
    ]
    referral, _, reference = _paid_request(api, paystack, sql, operator_token, key)
    referral_id = referral["referral_id"]
    assert _deliver(api, paystack, paystack.charge(reference)).json()["outcome"] == "applied"

    # A refund in another currency is not this payment's: nothing recorded.
    foreign = json.loads(paystack.refund_event(reference, refund_id=9000, amount=500_000))
    foreign["data"]["currency"] = "USD"
    outcome = _deliver(api, paystack, json.dumps(foreign).encode()).json()["outcome"]
    assert outcome == "refund_currency_mismatch"
    part = paystack.refund_event(reference, refund_id=9001, amount=500_000)
    assert _deliver(api, paystack, part).json()["outcome"] == "refund_recorded"
    assert _deliver(api, paystack, part).json()["outcome"] == "duplicate"
    rest = paystack.refund_event(reference, refund_id=9002, amount=1_500_000)
    assert _deliver(api, paystack, rest).json()["outcome"] == "refund_recorded"

    first, second = _events(sql, referral_id, "payment.refunded")
    assert first["refund"] == {
        "currency": "NGN",
        "amount_minor": 500_000,
        "refunded_total_minor": 500_000,
    }
    assert first["payment"]["commission_status"] == "pending_settlement"
    assert second["refund"]["refunded_total_minor"] == 2_000_000
    assert second["payment"] == {
        "currency": "NGN",
        "amount_minor": 2_000_000,
        "partner_commission_minor": 0,
        "commission_status": "reversed",
    }
    assert set(second) == {
        "referral_id",
        "external_ref",
        "status",
        "care_mode",
        "refund",
        "payment",
    }
    stored = rows(
        sql, "SELECT state, refunded_minor FROM payments WHERE reference = :r", r=reference
    )
    assert [(s.state, s.refunded_minor) for s in stored] == [("refunded", 2_000_000)]


def test_unknown_events_and_references_are_acknowledged_and_ignored(api, paystack, sql):
    other = json.dumps({"event": "transfer.success", "data": {"reference": "x"}}).encode()
    assert _deliver(api, paystack, other).json()["outcome"] == "ignored"
    stranger = json.dumps(
        {"event": "charge.success", "data": {"reference": "rr_not_ours", "amount": 1}}
    ).encode()
    assert _deliver(api, paystack, stranger).json()["outcome"] == "unknown_reference"
    for garbage in (b"", b"not json", b"[1, 2]", b'{"event": "charge.success"}'):
        answer = _deliver(api, paystack, garbage)
        error_of(answer, 400, "malformed_request")
