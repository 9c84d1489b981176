"""Rendering rows as the coordinator's view (ops API only: it holds contact details)."""

from __future__ import annotations

from typing import Any

from rehabref.clock import as_utc, iso
from rehabref.crypto import KeyRing
from rehabref.intake.rows import AssistantSessionRow
from rehabref.ops.service import QueuedTask
from rehabref.referrals.coordinator_notes import task_note
from rehabref.referrals.rows import PatientColumns, ReferralRow
from rehabref.referrals.sealing import clinical_text, patient_identity
from rehabref.referrals.transitions import ALLOWED


def _when(value: Any) -> str | None:
    return None if value is None else iso(as_utc(value))


def patient_of(ring: KeyRing, row: PatientColumns) -> dict[str, Any]:
    person = patient_identity(ring, row)
    return {
        "first_name": person.first_name,
        "last_name": person.last_name,
        "phone": person.phone,
        "email": person.email,
        "city": row.patient_city,
        "area": row.patient_area,
    }


def referral_view(ring: KeyRing, row: ReferralRow) -> dict[str, Any]:
    clinical = clinical_text(ring, row)
    appointment = None
    if row.appointment_status is not None:
        appointment = {
            "status": row.appointment_status,
            "scheduled_at": _when(row.appointment_scheduled_at),
            "care_mode": row.appointment_care_mode,
        }
    payment = None
    if row.payment_amount_minor is not None:
        payment = {
            "currency": row.payment_currency,
            "amount_minor": row.payment_amount_minor,
            "partner_commission_minor": row.commission_minor,
            "commission_status": row.commission_status,
        }
    return {
        "referral_id": row.id,
        "partner_id": row.partner_id,
        "environment": row.environment,
        "shape": row.shape,
        "status": row.status,
        "allowed_transitions": sorted(ALLOWED.get(row.status, frozenset())),
        "external_ref": row.external_ref,
        "partner_reference": row.partner_reference,
        "tracking_code": row.tracking_code,
        "care_mode": row.care_mode,
        "route": row.route,
        "preferred_contact": row.preferred_contact,
        "reason": clinical.reason,
        "patient": patient_of(ring, row),
        "appointment": appointment,
        "payment": payment,
        "assigned_physio_id": row.assigned_physio_id,
        "created_at": _when(row.created_at),
        "updated_at": _when(row.updated_at),
    }


def intake_view(row: AssistantSessionRow | None) -> dict[str, Any] | None:
    if row is None:
        return None
    return {
        "opened_at": _when(row.opened_at),
        "completed_at": _when(row.completed_at),
        "expires_at": _when(row.expires_at),
        "availability": row.availability.split(",") if row.availability else [],
        "care_mode": row.care_mode,
        "area": row.area,
    }


def transition_view(row: Any) -> dict[str, Any]:
    """``row``: a move as ``service.history`` gives it (its reason opened)."""
    return {
        "from_status": row.from_status,
        "to_status": row.to_status,
        "actor": row.actor,
        "reason": row.reason,
        "created_at": _when(row.created_at),
    }


def task_view(ring: KeyRing, row: QueuedTask) -> dict[str, Any]:
    """A contact_tasks row joined with its referral's patient columns."""
    return {
        "task_id": row.id,
        "referral_id": row.referral_id,
        "partner_id": row.partner_id,
        "environment": row.environment,
        "channel": row.channel,
        "purpose": row.purpose,
        "status": row.status,
        "claimed_by": row.claimed_by,
        "outcome": row.outcome,
        "note": task_note(ring, row.note),
        "patient": patient_of(ring, row),
        "referral_status": row.referral_status,
        "created_at": _when(row.created_at),
        "updated_at": _when(row.updated_at),
        "completed_at": _when(row.completed_at),
    }
