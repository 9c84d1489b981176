"""The ops API's payment requests: validation, idempotency, refusals, and a Paystack outage
(the request survives; the worker retries), on SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from urllib.parse import urlsplit

from tests.billing.conftest import ask_payment, initialized, referral_at, rows, wait_for
from tests.support.api import error_of
from tests.support.operators import OPS, moved, op_headers


def test_bad_bodies_and_unknown_referrals_get_the_spec_error(api, make_partner, operator_token):
    key = make_partner(name="Valid Clinic")["keys"]["sk_live"]
    referral_id = referral_at(api, operator_token, key, "attended")["referral_id"]
    path = f"{OPS}/referrals/{referral_id}/payment-requests"
    headers = {**op_headers(operator_token), "Idempotency-Key": "v-1"}
    for body, field in (
        ({"amount_minor": 0, "currency": "NGN"}, "amount_minor"),
        ({"amount_minor": 2000.5, "currency": "NGN"}, "amount_minor"),
        ({"amount_minor": "2000", "currency": "NGN"}, "amount_minor"),
        ({"amount_minor": 2_000_000_001, "currency": "NGN"}, "amount_minor"),
        ({"amount_minor": 200000, "currency": "USD"}, "currency"),
        ({"amount_minor": 200000}, "currency"),
        ({"amount_minor": 200000, "currency": "NGN", "email": "x@y.z"}, "email"),
    ):
        error = error_of(api.post(path, json=body, headers=headers), 422, "validation_error")
        assert field in error["fields"], error
    error_of(api.post(path, content=b"\xff{", headers=headers), 400)
    no_key = api.post(
        path, json={"amount_minor": 100, "currency": "NGN"}, headers=op_headers(operator_token)
    )
    error_of(no_key, 400, "idempotency_key_required")
    error_of(ask_payment(api, operator_token, "ref_unknown"), 404, "not_found")
    error_of(
        api.post(
            path,
            json={"amount_minor": 100, "currency": "NGN"},
            headers={"Authorization": f"Bearer {key}", "Idempotency-Key": "k"},
        ),
        401,
    )


def test_a_retried_request_is_answered_once(api, sql, make_partner, operator_token):
    key = make_partner(name="Retry Clinic")["keys"]["sk_live"]
    referral_id = referral_at(api, operator_token, key, "attended")["referral_id"]
    idem = f"pay-{uuid.uuid4()}"
    first = ask_payment(api, operator_token, referral_id, 300_000, key=idem)
    again = ask_payment(api, operator_token, referral_id, 300_000, key=idem)
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again.headers.get("idempotent-replayed") == "true"
    assert (
        len(rows(sql, "SELECT id FROM payment_requests WHERE referral_id = :r", r=referral_id)) == 1
    )
    other = ask_payment(api, operator_token, referral_id, 400_000, key=idem)
    error_of(other, 422, "idempotency_key_reused")


def test_paid_and_ended_referrals_take_no_payment_request(api, make_partner, operator_token):
    key = make_partner(name="Ended Clinic")["keys"]["sk_live"]
    referral_id = referral_at(api, operator_token, key, "attended")["referral_id"]
    moved(api, operator_token, referral_id, "closed")
    error_of(ask_payment(api, operator_token, referral_id), 409, "invalid_transition")


def test_a_paystack_outage_leaves_the_request_to_the_worker_retries(
    api, paystack, sql, make_partner, operator_token
):
    key = make_partner(name="Outage Clinic")["keys"]["sk_live"]
    referral_id = referral_at(api, operator_token, key, "attended")["referral_id"]
    paystack.outage = 503
    try:
        created = ask_payment(api, operator_token, referral_id)
        assert created.status_code == 201
        request_id = created.json()["payment_request_id"]

        def tried() -> bool:
            [row] = rows(
                sql,
                "SELECT init_attempts, init_state, last_error FROM payment_requests WHERE id = :i",
                i=request_id,
            )
            return bool(row.init_attempts >= 1 and row.init_state == "pending" and row.last_error)

        wait_for(tried, what="a failed initialization attempt")
        page = api.get(urlsplit(created.json()["authorization_url"]).path)
        assert page.status_code == 200 and "Preparing" in page.text
    finally:
        paystack.outage = None
    initialized(sql, request_id)
    page = api.get(urlsplit(created.json()["authorization_url"]).path)
    assert page.status_code == 303
