"""Shape V1 (external_ref model): the create request, and the value types its answers share
(``responses.py``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    StrictBool,
    model_validator,
)

from rehabref import fields

CareMode = Literal["remote", "face_to_face", "either"]
PreferredContact = Literal["messaging", "sms", "email"]
Route = Literal["contact", "assistant"]
ReferralStatus = Literal[
    "received",
    "contact_pending",
    "assistant_started",
    "booked",
    "attended",
    "paid",
    "closed",
    "cancelled",
]
NextAction = Literal[
    "start_assistant",
    "await_contact",
    "complete_assistant",
    "attend_appointment",
    "record_payment",
    "close_referral",
    "none",
]

_strict = ConfigDict(extra="forbid", str_strip_whitespace=True)


class PatientV1(BaseModel):
    model_config = _strict

    first_name: fields.text(100)  # type: ignore[valid-type]
    phone: fields.Phone | None = None
    email: fields.Email | None = None
    city: fields.text(100)  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _one_contact_method(self) -> PatientV1:
        if self.phone is None and self.email is None:
            raise ValueError("Provide at least one contact method: phone (E.164) or email.")
        return self


class ConsentV1(BaseModel):
    model_config = _strict

    accepted: Annotated[StrictBool, AfterValidator(fields.accepted)]
    accepted_at: fields.UtcTimestamp
    version: fields.text(64)  # type: ignore[valid-type]
    source: fields.text(64)  # type: ignore[valid-type]


class ReferralCreateV1(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        str_strip_whitespace=True,
        json_schema_extra={
            "examples": [
                {
                    "external_ref": "HOSP-2026-000123",
                    "patient": {
                        "first_name": "Amaka",
                        "phone": "+2348031234567",
                        "city": "Lagos",
                    },
                    "reason": "Lower back pain after lifting; physiotherapy recommended",
                    "care_mode": "either",
                    "preferred_contact": "messaging",
                    "route": "assistant",
                    "consent": {
                        "accepted": True,
                        "accepted_at": "2026-11-20T09:30:00Z",
                        "version": "2026-01",
                        "source": "clinic_form",
                    },
                    "metadata": {"campaign": "back-care-week"},
                }
            ]
        },
    )

    external_ref: fields.Reference
    patient: PatientV1
    reason: fields.text(500)  # type: ignore[valid-type]
    care_mode: CareMode
    preferred_contact: PreferredContact
    route: Route
    consent: ConsentV1
    metadata: Annotated[dict[str, Any], AfterValidator(fields.metadata)] | None = None

    @model_validator(mode="after")
    def _channel_reachable(self) -> ReferralCreateV1:
        if self.preferred_contact == "email" and self.patient.email is None:
            raise fields.error_at("patient.email", "Required when preferred_contact is email.")
        if self.preferred_contact in {"sms", "messaging"} and self.patient.phone is None:
            raise fields.error_at(
                "patient.phone", f"Required when preferred_contact is {self.preferred_contact}."
            )
        return self

    def consent_time(self) -> datetime:
        # ``accepted_at`` passed ``fields.utc_timestamp`` when the model was validated.
        return datetime.fromisoformat(self.consent.accepted_at).astimezone(UTC)
