"""Console number fields: NaN, infinities and huge exponents are refused (422), not a 500."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from rehabref.console.care_forms import _number
from rehabref.errors import ApiError
from tests.conftest import auth
from tests.console.operators import csrf, make_operator, sign_in
from tests.support.payloads import v1_referral


def test_payment_amounts_that_are_not_numbers_are_refused(
    client: httpx.Client, database_url: str, partner: dict[str, Any]
) -> None:
    created = client.post(
        "/api/v1/partners/referrals",
        json=v1_referral(),
        headers=auth(partner["keys"]["sk_test"], uuid.uuid4().hex),
    )
    assert created.status_code == 201, created.text
    page_path = f"/console/referrals/{created.json()['referral_id']}"
    operator = make_operator(database_url)
    with httpx.Client(base_url=str(client.base_url), timeout=30) as console:
        assert sign_in(console, operator["token"]).status_code == 303
        for amount in ("NaN", "sNaN", "-NaN", "Infinity", "1e999999999", "1e-999999999"):
            token = csrf(console.get(page_path))
            answer = console.post(
                f"{page_path}/transition",
                data={"csrf_token": token, "to": "paid", "amount": amount, "currency": "NGN"},
            )
            assert answer.status_code == 422, (amount, answer.status_code)
            assert "Enter the amount paid" in answer.text
        token = csrf(console.get(page_path))
        answer = console.post(
            f"{page_path}/transition",
            data={"csrf_token": token, "to": "paid", "amount": "100", "currency": "ÉÉÉ"},
        )
        assert answer.status_code == 422
        assert "3-letter code" in answer.text


@pytest.mark.parametrize("raw", ["nan", "NaN", "inf", "-Infinity", "1e999"])
def test_coordinates_must_be_finite(raw: str) -> None:
    with pytest.raises(ApiError) as refused:
        _number({"lat": raw}, "lat")
    assert refused.value.status == 422
    assert _number({"lat": "6.5244"}, "lat") == 6.5244
    assert _number({}, "lat") is None
