"""The referral state machine: one explicit table, one function that applies a move.

Every move locks the referral row (``SELECT ... FOR UPDATE`` on PostgreSQL; SQLite writers
are serialised by ``Database.write()``), checks the table, updates the row, writes a
``referral_transitions`` row (who, when, why) and opens or closes the referral's contact
tasks, all in the caller's transaction, and returns the ``Move`` with the event it makes.
Recording that event is the caller's (``workflows.moves``): the outbox is a layer above.
Nothing here commits.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.clock import as_utc, iso, utcnow
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.errors import ApiError
from rehabref.ids import new_id
from rehabref.referrals.commission import record_for
from rehabref.referrals.coordinator_notes import sealed_transition_reason
from rehabref.referrals.event_data import appointment_data, payment_completed_data, referral_base
from rehabref.referrals.rows import ReferralRow
from rehabref.referrals.tasks import close_open_tasks, open_contact_task
from rehabref.tables.partners import Partner
from rehabref.tables.referrals import Referral, ReferralTransition

_referrals = table(Referral)
_transitions = table(ReferralTransition)
_partners = table(Partner)

TERMINAL = frozenset({"closed", "cancelled"})

ALLOWED: dict[str, frozenset[str]] = {
    "received": frozenset({"contact_pending", "assistant_started", "cancelled"}),
    "contact_pending": frozenset({"assistant_started", "booked", "cancelled"}),
    "assistant_started": frozenset({"booked", "cancelled"}),
    "booked": frozenset({"attended", "booked", "cancelled"}),  # booked -> booked: reschedule
    "attended": frozenset({"paid", "closed", "cancelled"}),
    "paid": frozenset({"closed", "cancelled"}),
    "closed": frozenset(),
    "cancelled": frozenset(),
}

# The event each move writes (contact_pending also opens a contact task).
EVENT_OF: dict[str, str] = {
    "contact_pending": "contact.requested",
    "assistant_started": "assistant.started",
    "booked": "appointment.booked",
    "attended": "appointment.attended",
    "paid": "payment.completed",
    "closed": "referral.closed",
    "cancelled": "referral.closed",
}

# Appointment care modes (the V1 vocabulary) allowed by the referral's care_mode.
APPOINTMENT_MODES: dict[str | None, frozenset[str]] = {
    "remote": frozenset({"remote"}),
    "face_to_face": frozenset({"face_to_face"}),
    "either": frozenset({"remote", "face_to_face"}),
    None: frozenset({"remote", "face_to_face"}),
}


@dataclass(frozen=True)
class AppointmentChange:
    scheduled_at: datetime
    care_mode: str


@dataclass(frozen=True)
class PaymentChange:
    amount_minor: int
    currency: str


@dataclass(frozen=True)
class Move:
    """An applied move: the referral as it is now and the event the move makes."""

    referral: ReferralRow
    event_type: str
    data: dict[str, Any]
    at: datetime


def is_allowed(current: str, to: str) -> bool:
    return to in ALLOWED.get(current, frozenset())


def check_move(current: str, to: str) -> None:
    if not is_allowed(current, to):
        allowed = ", ".join(sorted(ALLOWED.get(current, frozenset()))) or "none (terminal)"
        raise ApiError(
            409,
            "invalid_transition",
            f"A referral in status {current} cannot move to {to}; allowed: {allowed}.",
            fields={"to": f"Not allowed from {current}."},
        )


def _invalid(field: str, message: str) -> ApiError:
    return ApiError(
        422,
        "validation_error",
        "Some fields are invalid; see error.fields.",
        fields={field: message},
    )


def _check_details(
    row: ReferralRow, to: str, appointment: AppointmentChange | None, payment: PaymentChange | None
) -> None:
    if to == "booked":
        if appointment is None:
            raise _invalid("appointment", "Required when moving to booked.")
        allowed = APPOINTMENT_MODES.get(row.care_mode, APPOINTMENT_MODES[None])
        if appointment.care_mode not in allowed:
            raise _invalid(
                "appointment.care_mode",
                f"The referral's care_mode {row.care_mode} allows: {', '.join(sorted(allowed))}.",
            )
    elif appointment is not None:
        raise _invalid("appointment", "Only allowed when moving to booked.")
    if to == "paid":
        if payment is None:
            raise _invalid("payment", "Required when moving to paid.")
    elif payment is not None:
        raise _invalid("payment", "Only allowed when moving to paid.")


def _check_visit_started(row: ReferralRow, to: str, now: datetime) -> None:
    """A visit is attended from its booked time on, never before (spec 2.6: events follow
    real visits)."""
    booked_for = row.appointment_scheduled_at
    if to == "attended" and booked_for is not None and as_utc(now) < as_utc(booked_for):
        raise ApiError(
            409,
            "invalid_transition",
            f"The visit is booked for {iso(booked_for)}; it cannot be attended before then.",
            fields={"to": "The visit has not started yet."},
        )


async def lock_referral(conn: AsyncConnection, referral_id: str) -> ReferralRow | None:
    """The referral row, locked until the transaction ends (a no-op clause on SQLite)."""
    return (
        await conn.execute(
            select(_referrals).where(_referrals.c.id == referral_id).with_for_update()
        )
    ).first()


async def transition(
    conn: AsyncConnection,
    *,
    referral_id: str,
    to: str,
    actor: str,
    ring: KeyRing,
    reason: str | None = None,
    appointment: AppointmentChange | None = None,
    payment: PaymentChange | None = None,
    now: datetime | None = None,
) -> Move:
    """Apply one move; raises ApiError 404, 409 ``invalid_transition`` or 422. The reason
    is stored sealed under ``ring`` (``coordinator_notes``)."""
    now = now or utcnow()
    row = await lock_referral(conn, referral_id)
    if row is None:
        raise ApiError(404, "not_found", "No referral with this identifier.")
    check_move(row.status, to)
    _check_details(row, to, appointment, payment)
    _check_visit_started(row, to, now)
    if to == "attended" and not (reason or "").strip():
        # Attendance comes from the physiotherapist's check-in; by hand it is an override.
        raise _invalid("reason", "Required when marking a visit attended by hand (an override).")
    values: dict[str, Any] = {"status": to, "updated_at": now}
    show_payments = False
    if appointment is not None:
        values.update(
            appointment_status="booked",
            appointment_scheduled_at=appointment.scheduled_at,
            appointment_care_mode=appointment.care_mode,
        )
    if to == "attended":
        values["appointment_status"] = "attended"
    if to == "cancelled" and row.appointment_status == "booked":
        values["appointment_status"] = "cancelled"
    if payment is not None:
        agreement = (
            await conn.execute(
                select(
                    _partners.c.commission_bps,
                    _partners.c.commission_fixed_minor,
                    _partners.c.show_payments,
                ).where(_partners.c.id == row.partner_id)
            )
        ).one()
        show_payments = bool(agreement.show_payments)
        paid = record_for(
            currency=payment.currency,
            amount_minor=payment.amount_minor,
            bps=agreement.commission_bps,
            fixed_minor=agreement.commission_fixed_minor,
        )
        values.update(
            payment_currency=paid.currency,
            payment_amount_minor=paid.amount_minor,
            commission_minor=paid.commission_minor,
            commission_status=paid.commission_status,
        )
    await conn.execute(update(_referrals).where(_referrals.c.id == referral_id).values(**values))
    updated: ReferralRow = (
        await conn.execute(select(_referrals).where(_referrals.c.id == referral_id))
    ).one()
    await conn.execute(
        insert(_transitions),
        {
            "id": new_id("trn"),
            "referral_id": referral_id,
            "from_status": row.status,
            "to_status": to,
            "actor": actor,
            "reason": sealed_transition_reason(ring, reason),
            "created_at": now,
        },
    )
    data = referral_base(updated)
    if to == "contact_pending":
        channel = updated.preferred_contact or "phone"
        task_id = await open_contact_task(
            conn,
            referral_id=referral_id,
            partner_id=updated.partner_id,
            environment=updated.environment,
            channel=channel,
            purpose="initial_contact",
            now=now,
        )
        data.update(contact_task_id=task_id, channel=channel)
    elif to in {"booked", "attended"}:
        data["appointment"] = appointment_data(updated)
        if to == "booked":
            data["rescheduled"] = row.status == "booked"
    elif to == "paid":
        data = payment_completed_data(updated, show_payments=show_payments)
    elif to in TERMINAL:
        data["previous_status"] = row.status
        await close_open_tasks(conn, referral_id=referral_id, now=now)
    return Move(referral=updated, event_type=EVENT_OF[to], data=data, at=now)
