"""Signed, expiring links to the discharge summary PDF.

Token: ``<referral id>.<expiry, epoch seconds>.<signature>`` where the signature is
``SecretBox.sign("report-pdf:<referral id>.<expiry>")`` (HMAC-SHA-256 with a key derived
from the instance secret). The link works without an API key until it expires (1 hour);
a forged, altered or expired token is refused (403 ``forbidden``).
"""

from __future__ import annotations

import re
import time

from rehabref.instance_secret import SecretBox

TTL_SECONDS = 3600
_REFERRAL_ID = re.compile(r"^ref_[0-9a-z]{26}$")


def pdf_token(box: SecretBox, *, referral_id: str, now: float | None = None) -> str:
    expiry = int((time.time() if now is None else now) + TTL_SECONDS)
    body = f"{referral_id}.{expiry}"
    return f"{body}.{box.sign('report-pdf:' + body)}"


def pdf_url(box: SecretBox, *, base_url: str, referral_id: str) -> str:
    return f"{base_url}/reports/pdf/{pdf_token(box, referral_id=referral_id)}"


def read_pdf_token(box: SecretBox, token: str, *, now: float | None = None) -> str | None:
    """The referral id when the token is authentic and unexpired, else None."""
    parts = token.split(".")
    if (
        len(parts) != 3
        or not (parts[1].isascii() and parts[1].isdigit())
        or not _REFERRAL_ID.match(parts[0])
    ):
        return None
    referral_id, expiry, signature = parts
    if not box.verify(f"report-pdf:{referral_id}.{expiry}", signature):
        return None
    if int(expiry) <= (time.time() if now is None else now):
        return None
    return referral_id
