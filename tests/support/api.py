"""Small HTTP helpers for the partner API tests: create a referral, read an error body."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from tests.support.payloads import v1_referral

CREATE_PATHS = ("/api/v1/partners/referrals", "/v1/partner/referrals")
REFERRALS = "/api/v1/partners/referrals"


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def create(
    client: httpx.Client,
    key: str,
    body: dict[str, Any] | None = None,
    *,
    idempotency_key: str | None = None,
    path: str = REFERRALS,
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    """POST a Shape V1 referral (a fresh valid one unless ``body`` is given)."""
    return client.post(
        path,
        json=v1_referral() if body is None else body,
        headers={
            **bearer(key),
            "Idempotency-Key": idempotency_key or f"idem-{uuid.uuid4()}",
            **(headers or {}),
        },
    )


def created(client: httpx.Client, key: str, **overrides: Any) -> dict[str, Any]:
    """Create a referral from the default body with ``overrides``; returns the 201 body."""
    response = create(client, key, v1_referral(**overrides))
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def error_of(response: httpx.Response, status: int, code: str | None = None) -> dict[str, Any]:
    """Assert the spec's error body (section 7) and return its ``error`` object."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}
    error: dict[str, Any] = body["error"]
    assert set(error) == {"code", "message", "fields", "request_id"}
    assert isinstance(error["message"], str) and error["message"]
    assert isinstance(error["fields"], dict)
    assert error["request_id"] == response.headers["x-request-id"]
    if code is not None:
        assert error["code"] == code, error
    return error
