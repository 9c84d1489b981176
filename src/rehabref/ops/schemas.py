"""Coordinator (ops) API request and response models."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt, StringConstraints

from rehabref import fields
from rehabref.clock import utcnow
from rehabref.referrals.commission import MAX_AMOUNT_MINOR
from rehabref.referrals.schemas_v1 import ReferralStatus

_strict = ConfigDict(extra="forbid", str_strip_whitespace=True)


def _bookable(value: str) -> str:
    fields.bookable(fields.utc_timestamp_any(value), now=utcnow())
    return value


BookableUtc = Annotated[str, StringConstraints(max_length=40), AfterValidator(_bookable)]
Currency = Annotated[str, StringConstraints(pattern=r"^[A-Z]{3}$")]


class AppointmentIn(BaseModel):
    model_config = _strict

    scheduled_at: BookableUtc = Field(
        examples=["2026-11-25T09:00:00Z"],
        description="ISO 8601 UTC, at most two years ahead.",
    )
    care_mode: Literal["remote", "face_to_face"]

    def when(self) -> datetime:
        return fields.utc_timestamp_any(self.scheduled_at)


class PaymentIn(BaseModel):
    model_config = _strict

    amount_minor: Annotated[StrictInt, Field(ge=1, le=MAX_AMOUNT_MINOR)] = Field(
        examples=[2000000], description="Integer minor units (kobo for NGN)."
    )
    currency: Currency = Field(examples=["NGN"], description="ISO 4217, upper case.")


class TransitionRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        str_strip_whitespace=True,
        json_schema_extra={
            "examples": [
                {
                    "to": "booked",
                    "appointment": {"scheduled_at": "2026-11-25T09:00:00Z", "care_mode": "remote"},
                    "reason": "patient chose Tuesday morning",
                }
            ]
        },
    )

    to: ReferralStatus
    appointment: AppointmentIn | None = Field(None, description="Required when to=booked.")
    payment: PaymentIn | None = Field(None, description="Required when to=paid.")
    reason: fields.text(500) | None = None  # type: ignore[valid-type]


class ContactTaskComplete(BaseModel):
    model_config = _strict

    outcome: Literal["reached", "unreachable", "assistant_link_sent"] = Field(
        description="reached: the coordinator spoke to the patient and can book; "
        "unreachable: no answer; assistant_link_sent: send the patient a new assistant link."
    )
    note: fields.text(1000) | None = None  # type: ignore[valid-type]


class OpsPatient(BaseModel):
    first_name: str
    last_name: str | None
    phone: str | None
    email: str | None
    city: str
    area: str | None


class OpsAppointment(BaseModel):
    status: str
    scheduled_at: str | None
    care_mode: str | None


class OpsPayment(BaseModel):
    currency: str | None
    amount_minor: int | None
    partner_commission_minor: int | None
    commission_status: str | None


class OpsIntake(BaseModel):
    opened_at: str | None
    completed_at: str | None
    expires_at: str
    availability: list[str]
    care_mode: str | None
    area: str | None


class OpsTransition(BaseModel):
    from_status: str | None
    to_status: str
    actor: str
    reason: str | None
    created_at: str


class OpsReferral(BaseModel):
    """The coordinator view of a referral (includes contact details; ops only)."""

    referral_id: str
    partner_id: str
    environment: Literal["test", "live"]
    shape: str
    status: ReferralStatus
    allowed_transitions: list[str]
    external_ref: str | None
    partner_reference: str | None
    tracking_code: str | None
    care_mode: str | None
    route: str | None
    preferred_contact: str | None
    reason: str | None
    patient: OpsPatient
    appointment: OpsAppointment | None
    payment: OpsPayment | None
    assigned_physio_id: str | None
    created_at: str
    updated_at: str


class OpsReferralDetail(OpsReferral):
    intake: OpsIntake | None
    transitions: list[OpsTransition]


class OpsReferralList(BaseModel):
    data: list[OpsReferral]
    has_more: bool
    next_cursor: str | None


class OpsContactTask(BaseModel):
    task_id: str
    referral_id: str
    partner_id: str
    environment: str
    channel: str
    purpose: str
    status: Literal["open", "claimed", "done"]
    claimed_by: str | None
    outcome: str | None
    note: str | None
    patient: OpsPatient
    referral_status: str
    created_at: str
    updated_at: str
    completed_at: str | None


class OpsContactTaskList(BaseModel):
    data: list[OpsContactTask]
    has_more: bool
    next_cursor: str | None
