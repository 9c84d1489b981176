"""Proof that a Paystack webhook came from Paystack.

Threat: anyone who knows ``/webhooks/paystack`` could claim a patient paid. Paystack signs
each delivery: ``x-paystack-signature`` is the hex HMAC-SHA512 of the raw body with our
secret key. It is recomputed over the exact bytes received, before the body is parsed, and
compared in constant time; a missing or garbled header is simply invalid.
"""

from __future__ import annotations

import hashlib
import hmac


def sign(secret: str, raw_body: bytes) -> str:
    return hmac.new(secret.encode("utf-8"), raw_body, hashlib.sha512).hexdigest()


def signature_valid(secret: str | None, raw_body: bytes, header: str | None) -> bool:
    if not secret or not header:
        return False
    given = header.strip().lower().encode("ascii", "replace")
    return hmac.compare_digest(given, sign(secret, raw_body).encode("ascii"))
