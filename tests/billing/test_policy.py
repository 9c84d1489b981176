"""Pure payment decisions, the webhook signature, and the Paystack client's handling of
Paystack's answers (against the stand-in)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rehabref import wiring
from rehabref.billing import policy
from rehabref.billing.paystack import PaystackClient, PaystackError
from rehabref.billing.signature import signature_valid
from rehabref.config import load_settings
from rehabref.db import Database
from rehabref.instance_secret import SecretBox
from tests.support.paystack_api import PaystackApi

NOW = datetime(2026, 11, 24, 10, 0, tzinfo=UTC)


def _charge(amount: int = 2_000_000, currency: str = "NGN") -> policy.Charge:
    return policy.Charge("rr_x", "success", amount, currency)


@pytest.mark.parametrize(
    ("status", "state", "reason"),
    [
        ("attended", "applied", None),
        ("booked", "held", "awaiting_attendance"),
        ("received", "held", "awaiting_attendance"),
        ("paid", "held", "referral_status"),
        ("cancelled", "held", "referral_status"),
    ],
)
def test_a_matching_charge_is_applied_only_to_an_attended_referral(status, state, reason):
    decision = policy.decide(
        charge=_charge(), amount_minor=2_000_000, currency="NGN", referral_status=status
    )
    assert (decision.state, decision.hold_reason) == (state, reason)


@given(st.integers(min_value=0, max_value=2_000_000_000), st.sampled_from(["NGN", "USD", "ngn"]))
def test_any_other_amount_or_currency_is_held_whatever_the_status(amount, currency):
    decision = policy.decide(
        charge=_charge(amount, currency),
        amount_minor=1_000_000,
        currency="NGN",
        referral_status="attended",
    )
    matches = amount == 1_000_000 and currency.upper() == "NGN"
    assert decision.state == ("applied" if matches else "held")
    if not matches:
        assert decision.hold_reason == "amount_mismatch"


def test_placeholder_email_is_non_routable_and_holds_no_patient_data():
    assert policy.payer_email("amaka@example.com", "ref_1") == "amaka@example.com"
    assert policy.payer_email(None, "ref_01abc") == "ref_01abc@patients.rehabref.invalid"
    assert policy.payer_email("", "ref_01abc").endswith(".invalid")


def test_expiry_and_backoff():
    expires = policy.expires_at(NOW)
    assert expires == NOW + timedelta(days=7)
    assert not policy.is_expired(expires, NOW + timedelta(days=6))
    assert policy.is_expired(expires, expires)
    waits = [(policy.next_init_attempt(NOW, n, 5.0) - NOW).total_seconds() for n in range(1, 10)]
    assert waits[:4] == [5, 10, 20, 40] and max(waits) == 300


def test_references_and_amount_text():
    assert policy.new_reference(lambda n: "ab" * n) == "rr_" + "ab" * 12
    assert policy.naira(2_000_050, "NGN") == "NGN 20,000.50"
    assert policy.naira(5, "NGN") == "NGN 0.05"


def test_signature_is_hmac_sha512_of_the_raw_body_compared_safely():
    raw = b'{"event":"charge.success"}'
    good = hmac.new(b"sk", raw, hashlib.sha512).hexdigest()
    assert signature_valid("sk", raw, good)
    assert signature_valid("sk", raw, good.upper())
    assert not signature_valid("sk", raw + b" ", good)
    assert not signature_valid("other", raw, good)
    assert not signature_valid("sk", raw, None)
    assert not signature_valid(None, raw, good)
    assert not signature_valid("sk", raw, "\u00e9" * 128)
    assert not signature_valid("sk", raw, hmac.new(b"sk", raw, hashlib.sha256).hexdigest())


def test_the_client_against_paystack_answers():
    api = PaystackApi().start()

    async def scenario() -> None:
        client = PaystackClient(api_base=api.api_base, secret_key=api.secret_key, timeout=5)
        wrong = PaystackClient(api_base=api.api_base, secret_key="sk_wrong", timeout=5)
        try:
            done = await client.initialize(
                email="x@patients.rehabref.invalid",
                amount_minor=150_000,
                currency="NGN",
                reference="rr_unit",
                callback_url="http://127.0.0.1/pay/t",
                metadata={"referral_id": "ref_1"},
            )
            assert done.authorization_url.startswith("https://checkout.paystack.com/")
            assert done.reference == "rr_unit"
            assert (await client.verify("rr_unit")).status == "abandoned"
            api.charge("rr_unit")
            assert await client.verify("rr_unit") == policy.Charge(
                "rr_unit", "success", 150_000, "NGN"
            )
            with pytest.raises(PaystackError) as refused:
                await wrong.verify("rr_unit")
            assert not refused.value.retryable and "sk_wrong" not in refused.value.reason
            with pytest.raises(PaystackError) as unknown:
                await client.verify("rr_nobody")
            assert not unknown.value.retryable
            api.outage = 502
            with pytest.raises(PaystackError) as outage:
                await client.verify("rr_unit")
            assert outage.value.retryable
        finally:
            api.outage = None
            await client.aclose()
            await wrong.aclose()

    try:
        asyncio.run(scenario())
    finally:
        api.stop()
    unreachable = PaystackClient(api_base=api.api_base, secret_key="sk", timeout=1)

    async def down() -> None:
        try:
            with pytest.raises(PaystackError) as network:
                await unreachable.verify("rr_unit")
            assert network.value.retryable
        finally:
            await unreachable.aclose()

    asyncio.run(down())


def test_the_worker_initializes_payments_only_with_a_paystack_key(tmp_path):
    url = f"sqlite:///{tmp_path / 'wiring.db'}"
    for env, expected in (
        ({}, False),
        ({"REHABREF_PAYSTACK_SECRET_KEY": "sk_live_x"}, True),
    ):
        settings = load_settings({"REHABREF_DATABASE_URL": url, **env})
        channels = wiring.channel_providers(settings)
        messages = wiring.message_worker(Database(url), settings, channels, SecretBox("k" * 32))
        paystack = wiring.paystack_client(settings)
        jobs = wiring.periodic_jobs(
            wiring.coverage_sources(SecretBox("k" * 32).ring),
            wiring.roster_sources(),
            messages,
            ring=SecretBox("k" * 32).ring,
            settings=settings,
            paystack=paystack,
        )
        assert ("payments.initialize_due" in jobs) is expected
        assert (paystack is not None) is expected
        if paystack is not None:
            asyncio.run(paystack.aclose())
    assert load_settings({}).paystack_api_base == "https://api.paystack.co"
    with pytest.raises(ValueError, match="REHABREF_PAYSTACK_API_BASE"):
        load_settings({"REHABREF_PAYSTACK_API_BASE": "ftp://x"})
