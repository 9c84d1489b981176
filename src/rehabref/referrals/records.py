"""Rendering a stored referral row as the partner-facing V1 record.

The V1 record carries referral, contact, appointment and commercial status only: never the
reason text, clinical notes or patient contact details (data boundary, docs/decisions.md).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal, Protocol, cast

from rehabref.clock import iso
from rehabref.crypto import KeyRing
from rehabref.principal import Principal
from rehabref.referrals.partner_metadata import partner_metadata
from rehabref.referrals.responses import (
    AppointmentV1,
    ConsentRecordV1,
    PatientSummaryV1,
    PaymentV1,
    ReferralRecordV1,
)
from rehabref.referrals.rows import ReferralRow
from rehabref.referrals.schemas_v1 import CareMode, PreferredContact, ReferralStatus, Route
from rehabref.referrals.sealing import FIRST_NAME, open_text
from rehabref.referrals.status import next_action


class _V1Row(ReferralRow, Protocol):
    """A Shape V1 referral's row: the columns its create always writes, holding what its
    validated request allowed (``schemas_v1``), and the appointment states of ``transitions``."""

    @property
    def external_ref(self) -> str: ...

    @property
    def status(self) -> ReferralStatus: ...

    @property
    def care_mode(self) -> CareMode: ...

    @property
    def route(self) -> Route: ...

    @property
    def preferred_contact(self) -> PreferredContact: ...

    @property
    def consent_accepted_at(self) -> datetime: ...

    @property
    def consent_version(self) -> str: ...

    @property
    def consent_source(self) -> str: ...

    @property
    def appointment_status(self) -> Literal["booked", "attended", "cancelled"] | None: ...


def v1_record(ring: KeyRing, stored: ReferralRow, principal: Principal) -> ReferralRecordV1:
    row = cast(_V1Row, stored)
    appointment = None
    if row.appointment_status is not None:
        appointment = AppointmentV1(
            status=row.appointment_status,
            scheduled_at=iso(row.appointment_scheduled_at),
            care_mode=row.appointment_care_mode,
        )
    payment = None
    if principal.show_payments and row.payment_amount_minor is not None:
        payment = PaymentV1(
            # Written with the amount (``transitions``: a recorded payment).
            currency=cast(str, row.payment_currency),
            amount_minor=row.payment_amount_minor,
            partner_commission_minor=row.commission_minor,
            commission_status=row.commission_status,
        )
    return ReferralRecordV1(
        referral_id=row.id,
        external_ref=row.external_ref,
        status=row.status,
        care_mode=row.care_mode,
        route=row.route,
        preferred_contact=row.preferred_contact,
        next_action=next_action(row.status, row.route),
        patient=PatientSummaryV1(
            first_name=open_text(ring, FIRST_NAME, row.patient_first_name),
            city=row.patient_city,
        ),
        consent=ConsentRecordV1(
            accepted=bool(row.consent_accepted),
            accepted_at=iso(row.consent_accepted_at),
            version=row.consent_version,
            source=row.consent_source,
        ),
        metadata=partner_metadata(ring, row.partner_metadata),
        appointment=appointment,
        payment=payment,
        created_at=iso(row.created_at),
        updated_at=iso(row.updated_at),
    )
