"""The consent-withdrawal link every patient message and page carries: ``/w/<token>``.

Threat: a guessable or forgeable link would let anyone end someone else's care, and a link
carrying the phone or name would leak it into logs and previews. The token is the referral
id and an HMAC of it under the instance secret (``SecretBox``, its own purpose), nothing
else: no patient data, no expiry (consent can be withdrawn for as long as we hold data).
"""

from __future__ import annotations

import re

from rehabref.instance_secret import SecretBox

PATH = "/w/"
_TOKEN = re.compile(r"(ref_[A-Za-z0-9]{1,36})\.([A-Za-z0-9_-]{32})")


def withdrawal_token(box: SecretBox, referral_id: str) -> str:
    return f"{referral_id}.{box.sign('withdraw:' + referral_id)}"


def withdrawal_url(box: SecretBox, base_url: str, referral_id: str) -> str:
    return f"{base_url}{PATH}{withdrawal_token(box, referral_id)}"


def read_withdrawal_token(box: SecretBox, token: str) -> str | None:
    """The referral id of a genuine token, else None (any text is safe to pass)."""
    found = _TOKEN.fullmatch(token)
    if found is None or not box.verify("withdraw:" + found.group(1), found.group(2)):
        return None
    return found.group(1)
