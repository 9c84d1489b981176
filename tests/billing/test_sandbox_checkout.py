"""Test keys' card payments: the local sandbox checkout (Pay / Decline) drives the same
event handling as Paystack's webhook and never calls Paystack; in a real browser too."""

from __future__ import annotations

from urllib.parse import urlsplit

from playwright.sync_api import expect

from tests.billing.conftest import ask_payment, referral_at, rows, wait_for
from tests.links.test_browser_form import SCREENSHOTS, mobile_page


def _sandbox_request(api, make_partner, operator_token, status="attended"):
    partner = make_partner(name="Sandbox Pay Clinic", show_payments=True, commission_bps=1000)
    key = partner["keys"]["sk_test"]
    referral = referral_at(api, operator_token, key, status)
    created = ask_payment(api, operator_token, referral["referral_id"], 1_500_000)
    assert created.status_code == 201, created.text
    return referral, created.json()


def test_decline_records_nothing_and_pay_completes_the_payment(
    api, paystack, sql, make_partner, operator_token
):
    referral, request = _sandbox_request(api, make_partner, operator_token)
    referral_id = referral["referral_id"]
    path = urlsplit(request["authorization_url"]).path
    page = api.get(path)
    assert page.status_code == 200
    assert "Sandbox checkout" in page.text and "NGN 15,000.00" in page.text
    assert 'method="post"' in page.text

    declined = api.post(f"{path}/sandbox", data={"outcome": "decline"})
    assert declined.status_code == 200 and "declined" in declined.text
    assert rows(sql, "SELECT id FROM payments WHERE referral_id = :r", r=referral_id) == []

    paid = api.post(f"{path}/sandbox", data={"outcome": "pay"})
    assert paid.status_code == 200 and "Payment received" in paid.text
    [payment] = rows(
        sql, "SELECT state, provider FROM payments WHERE referral_id = :r", r=referral_id
    )
    assert (payment.state, payment.provider) == ("applied", "sandbox")
    [event] = rows(
        sql,
        "SELECT id FROM events WHERE referral_id = :r AND type = 'payment.completed'",
        r=referral_id,
    )
    assert event
    # Paid once: the button again is refused, and Paystack never heard of this request.
    assert api.post(f"{path}/sandbox", data={"outcome": "pay"}).status_code == 409
    assert all(request["reference"] not in r.path + r.raw.decode() for r in paystack.requests)
    # The link reached the patient through the sandbox channel (recorded, never sent).
    messages = wait_for(
        lambda: rows(
            sql,
            "SELECT state FROM outbound_messages"
            " WHERE referral_id = :r AND purpose = 'payment.link'",
            r=referral_id,
        ),
        what="the payment link message",
    )
    assert len(messages) == 1


def test_live_webhooks_cannot_pay_a_sandbox_request_and_get_is_not_a_payment(
    api, paystack, sql, make_partner, operator_token
):
    referral, request = _sandbox_request(api, make_partner, operator_token)
    path = urlsplit(request["authorization_url"]).path
    assert api.get(f"{path}/sandbox").status_code in {404, 405}
    error = api.post(f"{path}/sandbox", data={"outcome": "steal"})
    assert error.status_code == 404
    raw = (
        b'{"event": "charge.success", "data": {"reference": "'
        + request["reference"].encode()
        + b'", "amount": 1500000, "currency": "NGN"}}'
    )
    answer = api.post("/webhooks/paystack", content=raw, headers=paystack.signed(raw))
    assert answer.json()["outcome"] == "unknown_reference"
    assert (
        rows(sql, "SELECT id FROM payments WHERE referral_id = :r", r=referral["referral_id"]) == []
    )


def test_sandbox_checkout_in_a_browser(api, sql, make_partner, operator_token):
    referral, request = _sandbox_request(api, make_partner, operator_token)
    with mobile_page() as page:
        page.goto(request["authorization_url"])
        expect(page.get_by_role("heading", name="Pay for your physiotherapy care")).to_be_visible()
        expect(page.get_by_text("NGN 15,000.00")).to_be_visible()
        # docs/img/payments-sandbox-checkout.png is a copy of this screenshot.
        page.screenshot(path=str(SCREENSHOTS / "payments-sandbox-checkout.png"), full_page=True)
        page.get_by_role("button", name="Decline").click()
        expect(page.get_by_role("heading", name="Payment declined")).to_be_visible()
        page.goto(request["authorization_url"])
        page.get_by_role("button", name="Pay", exact=True).click()
        expect(page.get_by_role("heading", name="Payment received")).to_be_visible()
        page.goto(request["authorization_url"])
        expect(page.get_by_role("heading", name="Payment received")).to_be_visible()
    [payment] = rows(
        sql, "SELECT state FROM payments WHERE referral_id = :r", r=referral["referral_id"]
    )
    assert payment.state == "applied"
