"""The hosted referral form: reading the posted fields and checking them with the API's rules.

The form is turned into the same ``ReferralCreateV1`` body the API accepts, so every field
rule (E.164 phone, e-mail, lengths, channel reachable) is the API's; the messages are mapped
back to the form's field names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from rehabref.referrals.schemas_v1 import ReferralCreateV1

CONSENT_VERSION = "hosted-link-2026-01"
CONSENT_SOURCE = "hosted_link"
CONSENT_TEXT = (
    "I agree that {partner} may share the details on this form with the physiotherapy "
    "coordination service, and that the service may contact me about my care by the channel "
    "I chose. I can withdraw this consent at any time."
)

FIELDS = (
    "first_name",
    "phone",
    "email",
    "city",
    "reason",
    "care_mode",
    "preferred_contact",
    "consent",
)
CARE_MODES = (
    ("either", "Either is fine"),
    ("face_to_face", "In person (home or clinic)"),
    ("remote", "Remote (video call)"),
)
CONTACTS = (
    ("messaging", "Messaging app"),
    ("sms", "SMS text message"),
    ("email", "E-mail"),
)
LABELS = {
    "first_name": "First name",
    "phone": "Mobile phone",
    "email": "E-mail",
    "city": "City or town",
    "reason": "What do you need help with?",
    "care_mode": "How would you like to be seen?",
    "preferred_contact": "How should we contact you?",
    "consent": "Consent",
}
_REQUIRED = {
    "first_name": "Enter your first name.",
    "city": "Enter your city or town.",
    "reason": "Tell us briefly what you need help with.",
    "care_mode": "Choose how you would like to be seen.",
    "preferred_contact": "Choose how we should contact you.",
}
_PATH_TO_FIELD = {
    "patient.first_name": "first_name",
    "patient.phone": "phone",
    "patient.email": "email",
    "patient.city": "city",
    "patient": "phone",
    "reason": "reason",
    "care_mode": "care_mode",
    "preferred_contact": "preferred_contact",
    "body": "preferred_contact",
}
_PHONE_PUNCTUATION = re.compile(r"[\s().\-]")


@dataclass
class FormResult:
    values: dict[str, str]
    errors: dict[str, str] = field(default_factory=dict)
    request: ReferralCreateV1 | None = None


def _text(form: Any, name: str, limit: int = 2000) -> str:
    value = form.get(name)
    return value.strip()[:limit] if isinstance(value, str) else ""


def normalise_phone(value: str) -> str:
    """Spaces, dots, dashes and brackets are dropped; a leading 00 becomes +."""
    compact = _PHONE_PUNCTUATION.sub("", value)
    return "+" + compact[2:] if compact.startswith("00") else compact


def read_form(
    form: Any, *, external_ref: str, accepted_at: str, metadata: dict[str, Any]
) -> FormResult:
    values = {name: _text(form, name) for name in FIELDS if name != "consent"}
    values["consent"] = "yes" if _text(form, "consent") == "yes" else ""
    result = FormResult(values=values)
    phone = normalise_phone(values["phone"]) if values["phone"] else None
    contact = values["preferred_contact"]
    body: dict[str, Any] = {
        "external_ref": external_ref,
        "patient": {
            "first_name": values["first_name"],
            "phone": phone,
            "email": values["email"] or None,
            "city": values["city"],
        },
        "reason": values["reason"],
        "care_mode": values["care_mode"],
        "preferred_contact": contact,
        # Messaging starts the assistant at once; SMS and e-mail queue a human follow-up.
        "route": "assistant" if contact == "messaging" else "contact",
        "consent": {
            "accepted": True,
            "accepted_at": accepted_at,
            "version": CONSENT_VERSION,
            "source": CONSENT_SOURCE,
        },
        "metadata": metadata,
    }
    try:
        request = ReferralCreateV1.model_validate(body)
    except ValidationError as exc:
        result.errors = _field_errors(exc, contact)
    else:
        result.request = request
    if values["consent"] != "yes":
        result.errors["consent"] = "Tick the box to give your consent, or we cannot help you."
    if result.errors:
        result.request = None
    return result


def _field_errors(error: ValidationError, contact: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for item in error.errors(include_url=False, include_input=False):
        path = ".".join(str(part) for part in item["loc"]) or "body"
        name = _PATH_TO_FIELD.get(path)
        if name is None or name in found:
            continue
        if path == "patient":
            found[name] = "Enter a mobile phone number or an e-mail address."
        elif path == "body":
            wanted = "an e-mail address" if contact == "email" else "a mobile phone number"
            found[name] = f"Add {wanted} above, or choose another way to be contacted."
        elif name == "phone":
            found[name] = (
                "Enter your number with the country code, starting with +, e.g. +234 803 123 4567."
            )
        elif name == "email":
            found[name] = "Enter a valid e-mail address, like name@example.com."
        elif name in _REQUIRED and item["type"] in {"missing", "string_too_short", "literal_error"}:
            found[name] = _REQUIRED[name]
        elif item["type"] == "string_too_long":
            found[name] = "This is too long; please shorten it."
        else:
            found[name] = str(item["msg"]).removeprefix("Value error, ")
    # Order the summary like the form.
    return {name: found[name] for name in FIELDS if name in found}
