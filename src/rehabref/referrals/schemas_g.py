"""Shape G (partner_reference / clinical_notes model): create request, responses, record."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, RootModel, StringConstraints

from rehabref import fields
from rehabref.referrals.schemas_v1 import ReferralCreatedV1, ReferralCreateV1, ReferralRecordV1

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


class PatientNamePhone(BaseModel):
    name: str = Field(description="Full name.")
    phone: str


class MessagingIntake(BaseModel):
    dispatched: bool = Field(
        description="True only when the messaging provider accepted the intake message (tried "
        "once right after the create, with a short timeout; test keys: recorded by the sandbox, "
        "never sent). False: the message is queued and retried, or no provider is configured."
    )
    recipient: str
    intake_token: str = Field(description="Patient-only token; do not log it.")
    deep_link: str = Field(description="Opens the assistant intake flow for the patient only.")


class ReferralCreatedG(BaseModel):
    """HTTP 201 body of a Shape G create: the union of both observed variants."""

    status: Literal["success"]
    referral_id: str
    tracking_code: str
    partner_reference: str | None
    tracking_url: str
    intake_status: Literal["pending_messaging_response", "pending_coordinator_contact"] = Field(
        description="pending_coordinator_contact: live key and no WhatsApp provider configured; "
        "a coordinator contacts the patient."
    )
    patient: PatientNamePhone
    messaging_intake: MessagingIntake
    created_at: int = Field(description="Milliseconds since the Unix epoch.")


class PatientCamel(BaseModel):
    firstName: str
    lastName: str | None
    phone: str | None
    city: str


class AssignedPhysiotherapist(BaseModel):
    name: str
    licenseNumber: str
    specialization: str | None
    rating: float
    phone: str


class ReferralRecordG(BaseModel):
    """Shape G referral record (spec 2.4)."""

    status: Literal["success"]
    referral_id: str
    tracking_code: str
    partner_reference: str | None
    tracking_url: str
    current_status: CurrentStatus
    patient: PatientCamel
    assigned_physiotherapist: AssignedPhysiotherapist | None = Field(
        description="Null until a physiotherapist is matched."
    )
    sessions_completed: int
    sessions_total: int
    last_session_at: str | None
    next_session_at: str | None
    created_at: str


class ReferralCreateEither(RootModel[ReferralCreateV1 | ReferralCreateG]):
    """A create body in Shape V1 or Shape G; the fields present decide (docs/decisions.md)."""


class ReferralCreatedEither(RootModel[ReferralCreatedV1 | ReferralCreatedG]):
    """The 201 body in the shape of the request."""


class ReferralRecordEither(RootModel[ReferralRecordV1 | ReferralRecordG]):
    """A V1 referral renders as the V1 record, a Shape G referral as the 2.4 record."""


class ReferralListEither(BaseModel):
    """A page of referrals; each in the shape it was created in."""

    data: list[ReferralRecordV1 | ReferralRecordG]
    has_more: bool
    next_cursor: str | None
