"""Rendering a stored referral row as the partner-facing V1 record.

The V1 record carries referral, contact, appointment and commercial status only: never the
reason text, clinical notes or patient contact details (data boundary, docs/decisions.md).
"""

from __future__ import annotations

from typing import Any

from rehabref.clock import iso
from rehabref.crypto import KeyRing
from rehabref.principal import Principal
from rehabref.referrals.partner_metadata import partner_metadata
from rehabref.referrals.rows import ReferralRow
from rehabref.referrals.sealing import FIRST_NAME, open_text
from rehabref.referrals.status import next_action


def v1_record(ring: KeyRing, row: ReferralRow, principal: Principal) -> dict[str, Any]:
    appointment = None
    if row.appointment_status is not None:
        appointment = {
            "status": row.appointment_status,
            "scheduled_at": iso(row.appointment_scheduled_at),
            "care_mode": row.appointment_care_mode,
        }
    payment = None
    if principal.show_payments and row.payment_amount_minor is not None:
        payment = {
            "currency": row.payment_currency,
            "amount_minor": row.payment_amount_minor,
            "partner_commission_minor": row.commission_minor,
            "commission_status": row.commission_status,
        }
    return {
        "referral_id": row.id,
        "external_ref": row.external_ref,
        "status": row.status,
        "care_mode": row.care_mode,
        "route": row.route,
        "preferred_contact": row.preferred_contact,
        "next_action": next_action(row.status, row.route),
        "patient": {
            "first_name": open_text(ring, FIRST_NAME, row.patient_first_name),
            "city": row.patient_city,
        },
        "consent": {
            "accepted": bool(row.consent_accepted),
            "accepted_at": iso(row.consent_accepted_at),
            "version": row.consent_version,
            "source": row.consent_source,
        },
        "metadata": partner_metadata(ring, row.partner_metadata),
        "appointment": appointment,
        "payment": payment,
        "created_at": iso(row.created_at),
        "updated_at": iso(row.updated_at),
    }
