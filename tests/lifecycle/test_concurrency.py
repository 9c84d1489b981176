"""Concurrent moves on one referral: the row lock lets exactly one of them win."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import httpx

from tests.conftest import count
from tests.support.api import created
from tests.support.operators import OPS, moved, op_headers

PARALLEL = 8


def _parallel(server, calls):
    def run(call):
        with httpx.Client(base_url=server.base_url, timeout=60) as http:
            return call(http)

    with ThreadPoolExecutor(PARALLEL) as pool:
        return list(pool.map(run, calls))


def test_concurrent_cancels_yield_one_move_and_one_event(
    server, client, partner, operator_token, sql
):
    referral_id = created(client, partner["keys"]["sk_test"])["referral_id"]

    def cancel(http):
        return http.post(
            f"{OPS}/referrals/{referral_id}/transitions",
            json={"to": "cancelled"},
            headers=op_headers(operator_token),
        ).status_code

    statuses = _parallel(server, [cancel] * PARALLEL)
    assert sorted(statuses) == [200] + [409] * (PARALLEL - 1)
    assert (
        count(
            sql,
            "SELECT count(*) FROM events WHERE referral_id = :r AND type = 'referral.closed'",
            r=referral_id,
        )
        == 1
    )
    assert (
        count(
            sql,
            "SELECT count(*) FROM referral_transitions WHERE referral_id = :r AND "
            "to_status = 'cancelled'",
            r=referral_id,
        )
        == 1
    )


def test_concurrent_payments_record_one_payment(server, client, make_partner, operator_token, sql):
    partner = make_partner(name="Race Clinic", commission_bps=500, show_payments=True)
    referral_id = created(client, partner["keys"]["sk_test"])["referral_id"]
    moved(client, operator_token, referral_id, "assistant_started")
    moved(
        client,
        operator_token,
        referral_id,
        "booked",
        appointment={"scheduled_at": "2026-11-02T09:00:00Z", "care_mode": "remote"},
    )
    moved(client, operator_token, referral_id, "attended", reason="seen at home")

    def pay(amount):
        def call(http):
            return http.post(
                f"{OPS}/referrals/{referral_id}/transitions",
                json={"to": "paid", "payment": {"amount_minor": amount, "currency": "NGN"}},
                headers=op_headers(operator_token),
            ).status_code

        return call

    statuses = _parallel(server, [pay(1000 * (i + 1)) for i in range(PARALLEL)])
    assert sorted(statuses) == [200] + [409] * (PARALLEL - 1)
    assert (
        count(
            sql,
            "SELECT count(*) FROM events WHERE referral_id = :r AND type = 'payment.completed'",
            r=referral_id,
        )
        == 1
    )


def test_concurrent_intake_submits_complete_once(server, client, partner, sql):
    referral = created(client, partner["keys"]["sk_test"])
    path = urlsplit(referral["assistant_session_url"]).path
    page = client.get(path)
    token = re.search(r'name="form_token" value="([^"]+)"', page.text).group(1)
    # The web dialogue up to its summary, one answer per page; then all confirm at once.
    for answer in (
        {"choice": "lang:en"},
        {"choice": "consent:yes"},
        {"choice": "mode:remote"},
        {"text": "Yaba"},
        {"choice": "slot:weekends"},
    ):
        assert client.post(path, data={"form_token": token, **answer}).status_code == 303
    form = {"form_token": token, "choice": "confirm:yes"}

    def submit(http):
        return http.post(path, data=form).status_code

    statuses = _parallel(server, [submit] * PARALLEL)
    assert sorted(statuses) == [200] + [410] * (PARALLEL - 1)
    assert (
        count(
            sql,
            "SELECT count(*) FROM events WHERE referral_id = :r AND "
            "type = 'patient.intake_completed'",
            r=referral["referral_id"],
        )
        == 1
    )
