"""A rehabref server wired to a Paystack stand-in (and Twilio, for the patient's payment
link by SMS), with its worker running in-process, plus helpers for the payment journeys."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from tests.channels.conftest import TWILIO_FROM, new_phone, wait_for
from tests.conftest import auth
from tests.support.operators import (
    OPS,
    move,
    moved,
    op_headers,
    operator_token,  # noqa: F401 (a fixture)
)
from tests.support.payloads import v1_referral
from tests.support.paystack_api import PaystackApi
from tests.support.server import ServerProcess
from tests.support.twilio_api import TwilioApi

BOOKING = {"scheduled_at": "2026-11-02T09:00:00Z", "care_mode": "remote"}


@pytest.fixture(scope="module")
def paystack() -> Iterator[PaystackApi]:
    api = PaystackApi().start()
    yield api
    api.stop()


@pytest.fixture(scope="module")
def twilio() -> Iterator[TwilioApi]:
    api = TwilioApi().start()
    yield api
    api.stop()


@pytest.fixture(scope="module")
def pay_server(
    database_url: str,
    paystack: PaystackApi,
    twilio: TwilioApi,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[ServerProcess]:
    log_path = tmp_path_factory.mktemp("payments") / "server.log"
    process = ServerProcess(
        database_url,
        log_path,
        REHABREF_PAYSTACK_API_BASE=paystack.api_base,
        REHABREF_PAYSTACK_SECRET_KEY=paystack.secret_key,
        REHABREF_TWILIO_API_BASE=twilio.api_base,
        REHABREF_TWILIO_ACCOUNT_SID=twilio.account_sid,
        REHABREF_TWILIO_AUTH_TOKEN=twilio.auth_token,
        REHABREF_TWILIO_FROM=TWILIO_FROM,
    ).start()
    yield process
    process.stop()


@pytest.fixture
def api(pay_server: ServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=pay_server.base_url, timeout=30) as http:
        yield http


def referral_at(
    api: httpx.Client, token: str, key: str, status: str, **overrides: Any
) -> dict[str, Any]:
    """A new SMS-preferring referral (a fresh phone), moved on to ``status``."""
    body = v1_referral(preferred_contact="sms", **overrides)
    body["patient"] = {**body["patient"], "phone": new_phone()}
    response = api.post(
        "/api/v1/partners/referrals", json=body, headers=auth(key, f"idem-{uuid.uuid4()}")
    )
    assert response.status_code == 201, response.text
    referral: dict[str, Any] = {**response.json(), "phone": body["patient"]["phone"]}
    steps = ["assistant_started", "booked", "attended"]
    for step in steps[: steps.index(status) + 1] if status in steps else []:
        extra: dict[str, Any] = {"appointment": BOOKING} if step == "booked" else {}
        if step == "attended":
            extra["reason"] = "seen at home"
        moved(api, token, referral["referral_id"], step, **extra)
    return referral


def ask_payment(
    api: httpx.Client, token: str, referral_id: str, amount: int = 2_000_000, key: str | None = None
) -> httpx.Response:
    return api.post(
        f"{OPS}/referrals/{referral_id}/payment-requests",
        json={"amount_minor": amount, "currency": "NGN"},
        headers={**op_headers(token), "Idempotency-Key": key or f"pay-{uuid.uuid4()}"},
    )


def initialized(sql: Any, payment_request_id: str) -> str:
    """Waits for the worker's Paystack initialization; the request's reference."""

    def done() -> str | None:
        with sql.connect() as conn:
            row = conn.execute(
                text("SELECT init_state, reference FROM payment_requests WHERE id = :i"),
                {"i": payment_request_id},
            ).one()
        return str(row.reference) if row.init_state == "done" else None

    return str(wait_for(done, what="the Paystack initialization"))


def rows(sql: Any, query: str, **params: Any) -> list[Any]:
    with sql.connect() as conn:
        return list(conn.execute(text(query), params).all())


__all__ = ["BOOKING", "ask_payment", "initialized", "move", "referral_at", "rows", "wait_for"]
