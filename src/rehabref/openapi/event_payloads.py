"""The ``data`` of every webhook event type (docs/webhooks.md section 8), as schemas for the
OpenAPI ``webhooks`` section and the generated clients' typed events.

Threat: a partner's integration is written against this description; a field documented here
that the service does not send (or sends with another type) breaks it in production. A test
validates the sandbox's sample of every type, for both request shapes and after the data
boundary, against these schemas. Fields are only ever added within payload version 1, so
every object admits properties beyond the documented ones.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rehabref.events.catalogue import DESCRIPTIONS, EventType
from rehabref.referrals.status import STATUSES

_WHEN = "2026-11-22T08:00:00.000Z"
_STATUS: dict[str, Any] = {"enum": list(STATUSES)}


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class ReferralEventData(_Open):
    """The referral's identifiers and status after the change; V1 fields or Shape G fields."""

    referral_id: str = Field(examples=["ref_01m809eknq9reqrh1q9yd8kast"])
    status: str = Field(json_schema_extra=_STATUS, description="The referral status now.")
    external_ref: str | None = Field(
        default=None,
        description="Shape V1 partners: your reference.",
        examples=["CLINIC-2026-0001"],
    )
    care_mode: Literal["remote", "face_to_face", "either"] | None = Field(
        default=None, description="Shape V1 partners."
    )
    partner_reference: str | None = Field(default=None, description="Shape G partners.")
    tracking_code: str | None = Field(default=None, description="Shape G partners.")


class AppointmentData(_Open):
    status: Literal["booked", "attended"]
    scheduled_at: datetime
    care_mode: Literal["remote", "face_to_face", "either"]


class PaymentData(_Open):
    currency: Literal["NGN"]
    amount_minor: int = Field(description="Integer kobo.", examples=[2000000])
    partner_commission_minor: int = Field(examples=[200000])
    commission_status: Literal["pending_settlement", "settled", "reversed"]


class RefundData(_Open):
    currency: Literal["NGN"]
    amount_minor: int
    refunded_total_minor: int


class ReferralCreatedData(ReferralEventData):
    route: Literal["assistant", "contact"] | None = Field(default=None, description="Shape V1.")
    billing_mode: str | None = Field(default=None, description="Shape G.")
    priority: str | None = Field(default=None, description="Shape G.")
    intake_status: str | None = Field(default=None, description="Shape G.")


class ContactRequestedData(ReferralEventData):
    contact_task_id: str
    channel: Literal["messaging", "sms", "email", "phone"]
    route: Literal["assistant", "contact"] | None = None


class AssistantStartedData(ReferralEventData):
    pass


class AppointmentBookedData(ReferralEventData):
    appointment: AppointmentData
    rescheduled: bool


class AppointmentAttendedData(ReferralEventData):
    appointment: AppointmentData


class PaymentCompletedData(_Open):
    """Exactly the spec's field set (6.2), for both shapes."""

    referral_id: str
    external_ref: str | None
    status: Literal["paid"]
    care_mode: Literal["remote", "face_to_face", "either"]
    payment: PaymentData | None = Field(description="null when the agreement hides amounts.")


class PaymentRefundedData(_Open):
    referral_id: str
    external_ref: str | None
    status: str = Field(json_schema_extra=_STATUS, description="The referral status now.")
    care_mode: Literal["remote", "face_to_face", "either"]
    refund: RefundData
    payment: PaymentData | None


class ReferralClosedData(ReferralEventData):
    previous_status: str | None = None
    reason: str | None = Field(
        default=None, description="`consent_withdrawn` when the patient withdrew consent."
    )


class IntakeCompletedData(ReferralEventData):
    intake_status: Literal["completed"]
    completed_at: datetime


class Physiotherapist(_Open):
    name: str
    license_number: str
    specialization: str
    rating: float | None
    phone: str | None = Field(default=None, description="Shape G partners only.")


class ProviderMatchedData(ReferralEventData):
    matched_at: datetime
    physiotherapist: Physiotherapist


class GpsCheckIn(_Open):
    verified: bool
    method: str
    distance_km: float | None
    radius_km: float | None


class SessionCompletedData(ReferralEventData):
    session_id: str
    session_number: int
    session_type: str
    modality: str
    provider_name: str | None
    scheduled_at: datetime | None
    check_in_at: datetime | None
    check_out_at: datetime | None
    completed_at: datetime
    duration_seconds: int | None
    duration_minutes: float | None
    gps_check_in: GpsCheckIn | None
    invoice_reference: str | None
    clinical_summary: dict[str, Any] | None = Field(
        default=None, description="Shape G (clinical contract) partners only."
    )


class ScenarioFailedData(ReferralEventData):
    scenario: int = Field(ge=1, le=5)
    step: Literal["intake", "match", "session"]
    attempts: int
    reason: str


class CommissionSettledData(_Open):
    """About a month's statement, not a referral: no patient data."""

    statement_id: str
    period: str = Field(pattern=r"^\d{4}-\d{2}$", examples=["2026-10"])
    currency: Literal["NGN"]
    total_minor: int | None
    line_count: int
    settled_at: datetime


DATA_MODELS: dict[str, type[BaseModel]] = {
    "referral.created": ReferralCreatedData,
    "contact.requested": ContactRequestedData,
    "assistant.started": AssistantStartedData,
    "appointment.booked": AppointmentBookedData,
    "appointment.attended": AppointmentAttendedData,
    "payment.completed": PaymentCompletedData,
    "payment.refunded": PaymentRefundedData,
    "referral.closed": ReferralClosedData,
    "patient.intake_completed": IntakeCompletedData,
    "provider.matched": ProviderMatchedData,
    "session.completed": SessionCompletedData,
    "sandbox.scenario_failed": ScenarioFailedData,
    "commission.settled": CommissionSettledData,
}

_REFERRAL = {
    "referral_id": "ref_01m809eknq9reqrh1q9yd8kast",
    "external_ref": "CLINIC-2026-0001",
    "care_mode": "either",
}
_APPOINTMENT = {"status": "booked", "scheduled_at": _WHEN, "care_mode": "face_to_face"}
_PAYMENT = {
    "currency": "NGN",
    "amount_minor": 2000000,
    "partner_commission_minor": 200000,
    "commission_status": "pending_settlement",
}

# One example ``data`` per type (Shape V1 partner), shown in the reference and checked
# against its schema by the tests.
DATA_EXAMPLES: dict[str, dict[str, Any]] = {
    "referral.created": {**_REFERRAL, "status": "received", "route": "assistant"},
    "contact.requested": {
        **_REFERRAL,
        "status": "contact_pending",
        "contact_task_id": "task_01m809eknq9reqrh1q9yd8kasu",
        "channel": "messaging",
        "route": "contact",
    },
    "assistant.started": {**_REFERRAL, "status": "assistant_started"},
    "appointment.booked": {
        **_REFERRAL,
        "status": "booked",
        "appointment": _APPOINTMENT,
        "rescheduled": False,
    },
    "appointment.attended": {
        **_REFERRAL,
        "status": "attended",
        "appointment": {**_APPOINTMENT, "status": "attended"},
    },
    "payment.completed": {**_REFERRAL, "status": "paid", "payment": _PAYMENT},
    "payment.refunded": {
        **_REFERRAL,
        "status": "paid",
        "refund": {"currency": "NGN", "amount_minor": 500000, "refunded_total_minor": 500000},
        "payment": _PAYMENT,
    },
    "referral.closed": {**_REFERRAL, "status": "closed", "previous_status": "paid"},
    "patient.intake_completed": {
        **_REFERRAL,
        "status": "assistant_started",
        "intake_status": "completed",
        "completed_at": _WHEN,
    },
    "provider.matched": {
        **_REFERRAL,
        "status": "assistant_started",
        "matched_at": _WHEN,
        "physiotherapist": {
            "name": "Adaeze Okafor",
            "license_number": "MRTB/PT/2019/0421",
            "specialization": "musculoskeletal",
            "rating": 4.8,
        },
    },
    "session.completed": {
        **_REFERRAL,
        "status": "booked",
        "session_id": "ses_01m809eknq9reqrh1q9yd8kasv",
        "session_number": 2,
        "session_type": "follow_up",
        "modality": "home_visit",
        "provider_name": "Adaeze Okafor",
        "scheduled_at": "2026-11-22T07:10:00.000Z",
        "check_in_at": "2026-11-22T07:13:00.000Z",
        "check_out_at": _WHEN,
        "completed_at": _WHEN,
        "duration_seconds": 2820,
        "duration_minutes": 47.0,
        "gps_check_in": {
            "verified": True,
            "method": "scheduled_location",
            "distance_km": 0.12,
            "radius_km": 0.5,
        },
        "invoice_reference": "INV-2026-11-0042",
    },
    "sandbox.scenario_failed": {
        **_REFERRAL,
        "status": "assistant_started",
        "scenario": 3,
        "step": "session",
        "attempts": 6,
        "reason": "no physiotherapist assigned yet",
    },
    "commission.settled": {
        "statement_id": "cst_01m809eknq9reqrh1q9yd8kasw",
        "period": "2026-10",
        "currency": "NGN",
        "total_minor": 400000,
        "line_count": 2,
        "settled_at": _WHEN,
    },
}


def event_schema_name(event_type: EventType | str) -> str:
    """``payment.refunded`` -> ``PaymentRefundedEvent``."""
    return "".join(part.capitalize() for part in event_type.replace("_", ".").split(".")) + "Event"


def event_envelope(event_type: str, data_ref: str) -> dict[str, Any]:
    """The JSON Schema of one event: the fixed envelope around that type's ``data``."""
    return {
        "type": "object",
        "title": event_schema_name(event_type),
        "description": f"Sent when {DESCRIPTIONS[event_type]}.",
        "required": ["event_id", "type", "occurred_at", "data"],
        "properties": {
            "event_id": {"type": "string", "examples": ["evt_01jd3k8s0m2r5x7c9v1b3n5q7w"]},
            "type": {"const": event_type},
            "occurred_at": {"type": "string", "format": "date-time"},
            "data": {"$ref": data_ref},
        },
        "additionalProperties": False,
    }
