"""Receiver-side helper: verify a webhook from rehabref before trusting it.

    from rehabref.webhooks import verify, WebhookVerificationError

    try:
        event = verify(raw_body, request.headers, secret="whsec_live_...")
    except WebhookVerificationError:
        return 400
    # process idempotently by event["event_id"]

Pass the raw request body exactly as received (bytes), not re-serialised JSON.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any

__all__ = ["WebhookVerificationError", "verify"]


class WebhookVerificationError(Exception):
    """The request is not a fresh, authentic webhook signed with the given secret."""


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is not None:
        return value
    lowered = name.lower()
    for key, item in headers.items():
        if key.lower() == lowered:
            return item
    return None


def verify(
    raw_body: bytes,
    headers: Mapping[str, str],
    secret: str,
    tolerance: int = 300,
    now: float | None = None,
) -> dict[str, Any]:
    """Check X-Service-Signature and X-Service-Timestamp; return the parsed event.

    Rejects timestamps more than ``tolerance`` seconds in the past or the future, compares
    in constant time, and accepts the request when any ``v1=`` value matches (several are
    sent during a secret rotation). Raises ``WebhookVerificationError`` otherwise.
    """
    timestamp_text = _header(headers, "X-Service-Timestamp")
    signature_text = _header(headers, "X-Service-Signature")
    if not timestamp_text or not signature_text:
        raise WebhookVerificationError("missing X-Service-Timestamp or X-Service-Signature")
    try:
        timestamp = int(timestamp_text.strip())
    except ValueError:
        raise WebhookVerificationError("X-Service-Timestamp is not an integer") from None
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance:
        raise WebhookVerificationError("timestamp outside the tolerance")
    message = str(timestamp).encode() + b"." + bytes(raw_body)
    expected = hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()
    matched = False
    for part in signature_text.split():
        scheme, _, value = part.partition("=")
        # compare every candidate (no early exit) so timing does not reveal which matched
        if scheme == "v1" and hmac.compare_digest(value.encode(), expected.encode()):
            matched = True
    if not matched:
        raise WebhookVerificationError("no matching v1 signature")
    try:
        event = json.loads(raw_body)
    except ValueError:
        raise WebhookVerificationError("body is not JSON") from None
    if not isinstance(event, dict):
        raise WebhookVerificationError("body is not a JSON object")
    return event
