"""Numeric query parameters and headers written with non-ASCII digits are refused, not a 500.

``str.isdigit()`` accepts characters such as ``²`` that ``int()``/``float()`` reject.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx

from rehabref.events.schedule import retry_after_seconds
from tests.conftest import auth
from tests.support.operators import create_operator, op_headers

ODD_LIMITS = ("%C2%B2", "%C2%B9%C2%B2", "%E2%91%A0", "9" * 5000)  # ², ¹², ①, > int() digits


def _assert_refused(response: httpx.Response) -> None:
    assert response.status_code == 422, response.text
    assert "limit" in response.json()["error"]["fields"]


def test_partner_lists_refuse_non_ascii_limits(
    client: httpx.Client, partner: dict[str, Any]
) -> None:
    headers = auth(partner["keys"]["sk_test"])
    for path in (
        "/api/v1/partners/events",
        "/api/v1/partners/referral-links",
        "/api/v1/partners/referrals",
    ):
        for odd in ODD_LIMITS:
            _assert_refused(client.get(f"{path}?limit={odd}", headers=headers))


def test_ops_lists_refuse_non_ascii_limits(client: httpx.Client, database_url: str) -> None:
    headers = op_headers(create_operator(database_url))
    for path in (
        "/api/v1/ops/referrals",
        "/api/v1/ops/contact-tasks",
        "/api/v1/ops/physiotherapists",
        "/api/v1/ops/events",
        "/api/v1/ops/deliveries",
    ):
        for odd in ODD_LIMITS:
            response = client.get(f"{path}?limit={odd}", headers=headers)
            assert response.status_code == 422, (path, response.text)


def test_retry_after_with_non_ascii_digits_is_ignored() -> None:
    # A hostile receiver's header must not raise inside the worker (it would fail the
    # whole delivery batch, other partners' deliveries included, on every retry).
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert retry_after_seconds("²", now=now) is None
    assert retry_after_seconds("\u0661\u0662", now=now) is None
    assert retry_after_seconds("12", now=now) == 12.0
