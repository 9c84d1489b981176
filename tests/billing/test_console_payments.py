"""The console's card payment section: send a payment link, see it paid (sandbox checkout)."""

from __future__ import annotations

import re

import httpx

from tests.billing.conftest import referral_at, rows
from tests.console.operators import csrf, make_operator, sign_in


def test_a_coordinator_sends_a_payment_link_and_sees_it_paid(
    pay_server, api, database_url, sql, make_partner, operator_token
):
    key = make_partner(name="Console Pay Clinic", commission_bps=1000)["keys"]["sk_test"]
    referral_id = referral_at(api, operator_token, key, "attended")["referral_id"]
    operator = make_operator(database_url)
    with httpx.Client(base_url=pay_server.base_url, timeout=30) as console:
        assert sign_in(console, operator["token"]).status_code == 303
        page = console.get(f"/console/referrals/{referral_id}")
        assert "No payment link sent." in page.text

        def send(amount: str) -> httpx.Response:
            token = csrf(console.get(f"/console/referrals/{referral_id}"))
            return console.post(
                f"/console/referrals/{referral_id}/payment-request",
                data={"csrf_token": token, "amount": amount, "currency": "NGN"},
                follow_redirects=False,
            )

        bad = send("twenty")
        assert bad.status_code == 422 and "Enter the amount" in bad.text
        no_csrf = console.post(
            f"/console/referrals/{referral_id}/payment-request", data={"amount": "100"}
        )
        assert no_csrf.status_code in {400, 403}
        assert send("12,500").status_code == 303
        page = console.get(f"/console/referrals/{referral_id}?notice=payment_link_sent")
        assert "Payment link created" in page.text and "NGN 12,500.00" in page.text
        [request] = rows(
            sql,
            "SELECT pay_token, amount_minor FROM payment_requests WHERE referral_id = :r",
            r=referral_id,
        )
        assert request.amount_minor == 1_250_000
        assert f"/pay/{request.pay_token}" in page.text
    paid = api.post(f"/pay/{request.pay_token}/sandbox", data={"outcome": "pay"})
    assert paid.status_code == 200
    with httpx.Client(base_url=pay_server.base_url, timeout=30) as console:
        sign_in(console, operator["token"])
        page = console.get(f"/console/referrals/{referral_id}")
        assert re.search(r"<td>paid</td>\s*<td>applied", page.text), page.text[-3000:]
        assert "Send payment link" not in page.text  # a paid referral takes no new request
