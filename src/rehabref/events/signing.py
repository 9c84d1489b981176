"""Webhook signatures (spec 6.3): HMAC-SHA-256 over ``"{timestamp}.{raw body}"``.

The key is the whole secret string (``whsec_...``) as UTF-8 bytes. During a secret rotation
every active secret signs and the values are sent space-separated: ``v1=<hex> v1=<hex>``.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence

SCHEME = "v1"


def signature(secret: str, timestamp: int, body: bytes) -> str:
    message = str(timestamp).encode() + b"." + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def signature_header(secrets: Sequence[str], timestamp: int, body: bytes) -> str:
    return " ".join(f"{SCHEME}={signature(secret, timestamp, body)}" for secret in secrets)


def delivery_headers(
    *, event_id: str, secrets: Sequence[str], timestamp: int, body: bytes
) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "User-Agent": "rehabref-webhooks/1",
        "X-Service-Event-ID": event_id,
        "X-Service-Timestamp": str(timestamp),
        "X-Service-Signature": signature_header(secrets, timestamp, body),
    }
