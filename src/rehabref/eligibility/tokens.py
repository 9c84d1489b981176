"""Pre-authorisation tokens: signed, expiring, bound to partner, environment, member, procedure.

Format ``pa_<base64url JSON>.<signature>``; the signature is the instance ``SecretBox``'s
HMAC over the payload text, so a token is checked without a database read and cannot be
moved to another member, procedure, partner or environment.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import time
from dataclasses import dataclass

from rehabref.instance_secret import SecretBox

PREFIX = "pa_"
TTL_SECONDS = 30 * 24 * 3600  # a pre-authorisation stays valid for 30 days


@dataclass(frozen=True)
class PreAuth:
    partner_id: str
    environment: str
    hmo_code: str
    policy_number: str
    procedure_code: str
    expires_at: int  # epoch seconds
    # SHA-256 (hex, first 16 characters) of the member's verified phone: binds the token to
    # the patient it was checked for without putting the phone in the readable token.
    member_phone_digest: str


def issue(box: SecretBox, grant: PreAuth) -> str:
    payload = json.dumps(
        {
            "p": grant.partner_id,
            "e": grant.environment,
            "h": grant.hmo_code,
            "n": grant.policy_number,
            "c": grant.procedure_code,
            "x": grant.expires_at,
            "m": grant.member_phone_digest,
        },
        separators=(",", ":"),
        sort_keys=True,
    )
    body = base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")
    return f"{PREFIX}{body}.{box.sign('preauth:' + body)}"


def phone_digest(phone: str) -> str:
    return hashlib.sha256(phone.encode()).hexdigest()[:16]


def new_grant(
    *,
    partner_id: str,
    environment: str,
    hmo_code: str,
    policy_number: str,
    procedure_code: str,
    member_phone: str,
) -> PreAuth:
    return PreAuth(
        partner_id=partner_id,
        environment=environment,
        hmo_code=hmo_code,
        policy_number=policy_number,
        procedure_code=procedure_code,
        expires_at=int(time.time()) + TTL_SECONDS,
        member_phone_digest=phone_digest(member_phone),
    )


def read(box: SecretBox, token: str) -> PreAuth | None:
    """The grant when the token is genuine (expiry is checked by the caller); else None."""
    if not token.startswith(PREFIX) or token.count(".") != 1:
        return None
    body, signature = token[len(PREFIX) :].split(".")
    if not body or not box.verify("preauth:" + body, signature):
        return None
    try:
        data = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        return PreAuth(
            partner_id=str(data["p"]),
            environment=str(data["e"]),
            hmo_code=str(data["h"]),
            policy_number=str(data["n"]),
            procedure_code=str(data["c"]),
            expires_at=int(data["x"]),
            member_phone_digest=str(data["m"]),
        )
    except (binascii.Error, ValueError, KeyError, TypeError):
        return None


def refusal(
    grant: PreAuth | None,
    *,
    partner_id: str,
    environment: str,
    patient_phone: str | None = None,
    now: float | None = None,
) -> str | None:
    """Why a token may not be used by this caller (for this patient), or None when it may."""
    if grant is None:
        return "Not a pre_auth_token issued by this service."
    if grant.partner_id != partner_id or grant.environment != environment:
        return "This pre_auth_token was issued to another partner or environment."
    if patient_phone is not None and phone_digest(patient_phone) != grant.member_phone_digest:
        return "This pre_auth_token was issued for another member; check this patient's cover."
    if grant.expires_at <= (time.time() if now is None else now):
        return "This pre_auth_token has expired; check eligibility again."
    return None
