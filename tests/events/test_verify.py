"""rehabref.webhooks.verify: the receiver-side helper."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from rehabref.webhooks import WebhookVerificationError, verify

SECRET = "whsec_test_abc123"
BODY = json.dumps({"event_id": "evt_1", "type": "referral.created", "data": {}}).encode()
NOW = 1_800_000_000


def sign(secret: str, timestamp: int, body: bytes = BODY) -> str:
    return hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def headers(signature: str, timestamp: int = NOW) -> dict[str, str]:
    return {"X-Service-Timestamp": str(timestamp), "X-Service-Signature": signature}


def test_valid_signature_returns_the_event():
    event = verify(BODY, headers(f"v1={sign(SECRET, NOW)}"), SECRET, now=NOW)
    assert event["event_id"] == "evt_1"


def test_header_names_are_case_insensitive():
    lowered = {k.lower(): v for k, v in headers(f"v1={sign(SECRET, NOW)}").items()}
    assert verify(BODY, lowered, SECRET, now=NOW)["type"] == "referral.created"


def test_any_matching_v1_value_is_accepted_during_rotation():
    both = f"v1={sign('whsec_test_new', NOW)} v1={sign(SECRET, NOW)}"
    assert verify(BODY, headers(both), SECRET, now=NOW)["event_id"] == "evt_1"
    assert verify(BODY, headers(both), "whsec_test_new", now=NOW)["event_id"] == "evt_1"


@pytest.mark.parametrize(
    ("signature", "timestamp", "now"),
    [
        (f"v1={sign('whsec_test_other', NOW)}", NOW, NOW),  # wrong secret
        (f"v0={sign(SECRET, NOW)}", NOW, NOW),  # wrong scheme
        (f"v1={sign(SECRET, NOW)}", NOW, NOW + 301),  # stale
        (f"v1={sign(SECRET, NOW)}", NOW, NOW - 301),  # from the future
        (f"v1={sign(SECRET, NOW - 1)}", NOW, NOW),  # signed for another timestamp
        ("", NOW, NOW),
    ],
)
def test_rejections(signature, timestamp, now):
    with pytest.raises(WebhookVerificationError):
        verify(BODY, headers(signature, timestamp), SECRET, now=now)


def test_tampered_body_and_missing_headers_are_rejected():
    with pytest.raises(WebhookVerificationError):
        verify(BODY + b" ", headers(f"v1={sign(SECRET, NOW)}"), SECRET, now=NOW)
    with pytest.raises(WebhookVerificationError):
        verify(BODY, {}, SECRET, now=NOW)
    with pytest.raises(WebhookVerificationError):
        verify(BODY, headers(f"v1={sign(SECRET, NOW)}", timestamp="x"), SECRET, now=NOW)  # type: ignore[arg-type]


def test_tolerance_boundary():
    signature = f"v1={sign(SECRET, NOW)}"
    assert verify(BODY, headers(signature), SECRET, now=NOW + 300)
    assert verify(BODY, headers(signature), SECRET, tolerance=10, now=NOW + 10)
    with pytest.raises(WebhookVerificationError):
        verify(BODY, headers(signature), SECRET, tolerance=10, now=NOW + 11)
