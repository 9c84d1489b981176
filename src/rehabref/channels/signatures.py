"""Proof that a webhook came from the provider: Meta's and Twilio's request signatures, and
WhatsApp's subscription handshake.

Threat: anyone who knows our webhook URL could forge patient answers or delivery statuses.
Each check recomputes the provider's HMAC and compares in constant time (no timing oracle);
a missing or garbled header is simply invalid, never an exception.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Mapping

_META_PREFIX = "sha256="


def meta_signature_valid(app_secret: str, raw_body: bytes, header: str | None) -> bool:
    """``X-Hub-Signature-256`` is "sha256=" + hex HMAC-SHA256 of the raw body with the app
    secret (Meta's documented scheme)."""
    if not app_secret or not header or not header.startswith(_META_PREFIX):
        return False
    given = header[len(_META_PREFIX) :].strip().lower()
    expected = hmac.new(app_secret.encode("utf-8"), raw_body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(given.encode("ascii", "replace"), expected.encode("ascii"))


def twilio_signature_valid(
    auth_token: str,
    url: str,
    params: Mapping[str, str] | list[tuple[str, str]],
    header: str | None,
) -> bool:
    """``X-Twilio-Signature`` is base64 HMAC-SHA1 (auth token) of the full URL followed by
    every POST parameter's name and value, sorted by name (Twilio's documented algorithm;
    a repeated name contributes each value, in sorted order)."""
    if not auth_token or not header:
        return False
    pairs = list(params.items()) if isinstance(params, Mapping) else list(params)
    data = url + "".join(name + value for name, value in sorted(pairs))
    digest = hmac.new(auth_token.encode("utf-8"), data.encode("utf-8"), hashlib.sha1).digest()
    expected = base64.b64encode(digest)
    return hmac.compare_digest(header.strip().encode("ascii", "replace"), expected)


def whatsapp_handshake(params: Mapping[str, str], verify_token: str | None) -> str | None:
    """The challenge to echo when Meta subscribes our webhook with our verify token;
    None (answer 403) otherwise, including when no token is configured."""
    if not verify_token or params.get("hub.mode") != "subscribe":
        return None
    given = params.get("hub.verify_token") or ""
    if not hmac.compare_digest(given.encode("utf-8"), verify_token.encode("utf-8")):
        return None
    challenge = params.get("hub.challenge")
    return challenge if challenge else None
