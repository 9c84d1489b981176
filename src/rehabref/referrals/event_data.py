"""What a referral's events say about it: the ``data`` parts built from a ``referrals`` row.

Pure functions of rows (and one read of the partner's contract), shared by every emitter so
two events about the same referral never describe it differently.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.clock import iso
from rehabref.db import table
from rehabref.referrals.rows import ReferralRow
from rehabref.tables.partners import Partner

_partners = table(Partner)


def referral_base(row: ReferralRow) -> dict[str, Any]:
    """Identifiers and status every referral event carries (a ``referrals`` row)."""
    data: dict[str, Any] = {"referral_id": row.id, "status": row.status}
    if row.shape == "v1":
        data["external_ref"] = row.external_ref
        data["care_mode"] = row.care_mode
    else:
        data["partner_reference"] = row.partner_reference
        data["tracking_code"] = row.tracking_code
    return data


def callback_targets(row: ReferralRow) -> tuple[str, ...]:
    """A Shape G referral's callback_url receives that referral's events too."""
    url = row.callback_url
    return (url,) if url else ()


def appointment_data(row: ReferralRow) -> dict[str, Any]:
    return {
        "status": row.appointment_status,
        "scheduled_at": iso(row.appointment_scheduled_at),
        "care_mode": row.appointment_care_mode,
    }


def payment_completed_data(row: ReferralRow, *, show_payments: bool) -> dict[str, Any]:
    """Spec 6.2: exactly referral_id, external_ref, status, care_mode, payment, in both shapes.

    A Shape G referral has no external_ref: its partner_reference (the partner's own
    reference) takes that place, and care_mode falls back to the booked appointment's mode.
    """
    external_ref = row.external_ref if row.shape == "v1" else row.partner_reference
    return {
        "referral_id": row.id,
        "external_ref": external_ref,
        "status": row.status,
        "care_mode": row.care_mode or row.appointment_care_mode,
        "payment": payment_data(row) if show_payments else None,
    }


def payment_data(row: ReferralRow) -> dict[str, Any]:
    """Spec 2.9: the payment object inside webhook data."""
    return {
        "currency": row.payment_currency,
        "amount_minor": row.payment_amount_minor,
        "partner_commission_minor": row.commission_minor,
        "commission_status": row.commission_status,
    }


async def contract_of(conn: AsyncConnection, partner_id: str) -> str:
    """The partner's contract: ``g`` (clinical referrer) or ``v1``."""
    contract = (
        await conn.execute(select(_partners.c.contract).where(_partners.c.id == partner_id))
    ).scalar_one()
    return str(contract)
