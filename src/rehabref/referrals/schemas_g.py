"""Shape G (partner_reference / clinical_notes model): the create request (its answers are in
``responses.py``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, RootModel, StringConstraints

from rehabref import fields
from rehabref.referrals.schemas_v1 import ReferralCreateV1

Priority = Literal["standard", "urgent", "high"]
BillingMode = Literal["patient_self_pay", "hmo_direct_billing", "corporate_sponsored"]
CurrentStatus = Literal[
    "pending_intake", "intake_completed", "matched", "in_treatment", "completed", "cancelled"
]
MIN_SESSIONS = 1
MAX_SESSIONS = 50
DEFAULT_SESSIONS = 4
CALLBACK_URL_MAX = 2048

_strict = ConfigDict(extra="forbid", str_strip_whitespace=True)


def http_url(value: str) -> str:
    """Shape check only; the webhook target rules (no private addresses) run in the service."""
    lowered = value.lower()
    if not (lowered.startswith("https://") or lowered.startswith("http://")):
        raise ValueError("Use an absolute http(s) URL.")
    if any(ch.isspace() for ch in value) or len(value.split("://", 1)[1]) == 0:
        raise ValueError("Not a valid URL.")
    return value


CallbackUrl = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=8, max_length=CALLBACK_URL_MAX),
    AfterValidator(fields.plain_text),
    AfterValidator(http_url),
]
Reference = fields.Reference
SessionCount = Annotated[int, Field(strict=True, ge=MIN_SESSIONS, le=MAX_SESSIONS)]


class PatientG(BaseModel):
    model_config = _strict

    first_name: fields.text(100)  # type: ignore[valid-type]
    last_name: fields.text(100)  # type: ignore[valid-type]
    phone: fields.Phone
    email: fields.Email | None = None
    city: fields.text(100)  # type: ignore[valid-type]
    area: fields.text(100) | None = None  # type: ignore[valid-type]


class ClinicalNotesG(BaseModel):
    model_config = _strict

    diagnosis: fields.text(1000)  # type: ignore[valid-type]
    recommended_sessions: SessionCount = DEFAULT_SESSIONS
    priority: Priority = "standard"
    referring_doctor: fields.text(200) | None = None  # type: ignore[valid-type]


class ReferralCreateG(BaseModel):
    """Shape G create request (spec 2.2). ``pre_auth_token`` is an extension for HMOs."""

    model_config = ConfigDict(
        extra="forbid",
        str_strip_whitespace=True,
        json_schema_extra={
            "examples": [
                {
                    "partner_reference": "LUTH-ORTHO-2026-0042",
                    "patient": {
                        "first_name": "Chidi",
                        "last_name": "Okafor",
                        "phone": "+2348031234567",
                        "email": "chidi@example.com",
                        "city": "Lagos",
                        "area": "Surulere",
                    },
                    "clinical_notes": {
                        "diagnosis": "Post-operative knee stiffness after ACL repair",
                        "recommended_sessions": 6,
                        "priority": "urgent",
                        "referring_doctor": "Dr. A. Bello, LUTH Orthopaedics",
                    },
                    "billing_mode": "patient_self_pay",
                    "callback_url": "https://partner.example.com/hooks/rehab",
                }
            ]
        },
    )

    partner_reference: Reference | None = None
    patient: PatientG
    clinical_notes: ClinicalNotesG
    billing_mode: BillingMode
    callback_url: CallbackUrl | None = None
    pre_auth_token: (
        Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=512)]
        | None
    ) = Field(
        default=None,
        description="Only with billing_mode hmo_direct_billing: the pre_auth_token of an "
        "eligible eligibility check. Completed sessions then consume that member's allowance.",
    )


class ReferralCreateEither(RootModel[ReferralCreateV1 | ReferralCreateG]):
    """A create body in Shape V1 or Shape G; the fields present decide (docs/decisions.md)."""
