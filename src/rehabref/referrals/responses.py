"""The referral answers as msgspec Structs: the bodies the API encodes and the schemas the
OpenAPI document shows (``openapi/referrals.py``), one type per answer.

Field order is the JSON key order; a None field is written as ``null``. Timestamps are the
interface's text (``clock.iso``, or epoch milliseconds where Shape G says so).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from rehabref.cursors import Page
from rehabref.referrals.schemas_g import CurrentStatus
from rehabref.referrals.schemas_v1 import (
    CareMode,
    NextAction,
    PreferredContact,
    ReferralStatus,
    Route,
)
from rehabref.responses import AnswerUnion


class ReferralCreatedEither(AnswerUnion):
    """The 201 body in the shape of the request."""

    __slots__ = ()


class ReferralRecordEither(AnswerUnion):
    """A V1 referral renders as the V1 record, a Shape G referral as the 2.4 record."""

    __slots__ = ()


# Shape V1


class ReferralCreatedV1(msgspec.Struct, ReferralCreatedEither, frozen=True):
    """HTTP 201 body of a Shape V1 create."""

    referral_id: Annotated[str, msgspec.Meta(examples=["ref_01jd3k7v5n8q2w4e6r8t0y2u4i"])]
    external_ref: str
    status: ReferralStatus
    care_mode: CareMode
    next_action: NextAction
    assistant_session_url: Annotated[
        str | None,
        msgspec.Meta(
            description="Short-lived link for the patient only (route=assistant); null for "
            "contact. Do not log it or use it as an identifier."
        ),
    ]
    created_at: Annotated[str, msgspec.Meta(examples=["2026-11-21T10:00:00.000Z"])]


class PatientSummaryV1(msgspec.Struct, frozen=True):
    first_name: str
    city: str


class ConsentRecordV1(msgspec.Struct, frozen=True):
    accepted: bool
    accepted_at: str
    version: str
    source: str


class AppointmentV1(msgspec.Struct, frozen=True):
    status: Literal["booked", "attended", "cancelled"]
    scheduled_at: str | None
    care_mode: str | None


class PaymentV1(msgspec.Struct, frozen=True):
    currency: str
    amount_minor: int
    partner_commission_minor: int | None
    commission_status: str | None


class ReferralRecordV1(msgspec.Struct, ReferralRecordEither, frozen=True):
    """The V1 referral record: referral, contact, appointment and commercial status only."""

    referral_id: str
    external_ref: str
    status: ReferralStatus
    care_mode: CareMode
    route: Route
    preferred_contact: PreferredContact
    next_action: NextAction
    patient: PatientSummaryV1
    consent: ConsentRecordV1
    metadata: dict[str, Any] | None
    appointment: AppointmentV1 | None
    payment: Annotated[
        PaymentV1 | None,
        msgspec.Meta(
            description="Present only when the partner's commercial agreement shows payments."
        ),
    ]
    created_at: str
    updated_at: str


class ReferralListV1(Page[ReferralRecordV1], frozen=True):
    pass


# Shape G


class PatientNamePhone(msgspec.Struct, frozen=True):
    name: Annotated[str, msgspec.Meta(description="Full name.")]
    phone: str


class MessagingIntake(msgspec.Struct, frozen=True):
    dispatched: Annotated[
        bool,
        msgspec.Meta(
            description="True only when the messaging provider accepted the intake message "
            "(tried once right after the create, with a short timeout; test keys: recorded by "
            "the sandbox, never sent). False: the message is queued and retried, or no provider "
            "is configured."
        ),
    ]
    recipient: str
    intake_token: Annotated[str, msgspec.Meta(description="Patient-only token; do not log it.")]
    deep_link: Annotated[
        str, msgspec.Meta(description="Opens the assistant intake flow for the patient only.")
    ]


IntakeStatus = Literal["pending_messaging_response", "pending_coordinator_contact"]


class ReferralCreatedG(msgspec.Struct, ReferralCreatedEither, frozen=True):
    """HTTP 201 body of a Shape G create: the union of both observed variants."""

    status: Literal["success"]
    referral_id: str
    tracking_code: str
    partner_reference: str | None
    tracking_url: str
    intake_status: Annotated[
        IntakeStatus,
        msgspec.Meta(
            description="pending_coordinator_contact: live key and no WhatsApp provider "
            "configured; a coordinator contacts the patient."
        ),
    ]
    patient: PatientNamePhone
    messaging_intake: MessagingIntake
    created_at: Annotated[int, msgspec.Meta(description="Milliseconds since the Unix epoch.")]


class PatientCamel(msgspec.Struct, frozen=True):
    firstName: str
    lastName: str | None
    phone: str | None
    city: str


class AssignedPhysiotherapist(msgspec.Struct, frozen=True):
    name: str
    licenseNumber: str
    specialization: str | None
    rating: float
    phone: str


class ReferralRecordG(msgspec.Struct, ReferralRecordEither, frozen=True):
    """Shape G referral record (spec 2.4)."""

    status: Literal["success"]
    referral_id: str
    tracking_code: str
    partner_reference: str | None
    tracking_url: str
    current_status: CurrentStatus
    patient: PatientCamel
    assigned_physiotherapist: Annotated[
        AssignedPhysiotherapist | None,
        msgspec.Meta(description="Null until a physiotherapist is matched."),
    ]
    sessions_completed: int
    sessions_total: int
    last_session_at: str | None
    next_session_at: str | None
    created_at: str


class ReferralListEither(Page[ReferralRecordEither], frozen=True):
    """A page of referrals; each in the shape it was created in."""


# What each union names, in the order the document lists them.
ReferralCreatedEither.alternatives = (ReferralCreatedV1, ReferralCreatedG)
ReferralRecordEither.alternatives = (ReferralRecordV1, ReferralRecordG)
