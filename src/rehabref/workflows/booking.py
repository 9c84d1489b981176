"""Booking a visit into a free slot, moving it, cancelling it: the appointment (care), the
referral's move and its ``appointment.booked`` event (referral core, events), and the messages
to the patient and the physiotherapist, in one transaction.

A booking is a move to ``booked`` (or ``booked -> booked`` for a reschedule or a rebooking
after a cancelled visit), so partners see exactly the events they saw before, now for a slot
the physiotherapist offered.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.care import appointments
from rehabref.care.rows import AppointmentRow
from rehabref.crypto import KeyRing
from rehabref.eligibility.adapters import CoverageSources
from rehabref.eligibility.allowance import check_allowance
from rehabref.referrals.transitions import AppointmentChange
from rehabref.workflows import moves
from rehabref.workflows.physio_messages import visit_booked, visit_cancelled


async def book_visit(
    conn: AsyncConnection,
    *,
    referral_id: str,
    physio_id: str | None,
    starts_at: datetime,
    care_mode: str,
    actor: str,
    reason: str | None,
    ring: KeyRing,
    now: datetime,
    coverage: CoverageSources,
) -> AppointmentRow:
    """Refused first (409 ``allowance_exceeded``) when an HMO-billed member has no covered
    session left for the visit's session."""
    await check_allowance(conn, referral_id=referral_id, coverage=coverage)
    appointment = await appointments.book(
        conn,
        referral_id=referral_id,
        physio_id=physio_id,
        starts_at=starts_at,
        care_mode=care_mode,
        actor=actor,
        now=now,
    )
    await _move_to_booked(conn, appointment, actor=actor, reason=reason, ring=ring, now=now)
    await visit_booked(conn, appointment, ring=ring, now=now)
    return appointment


async def reschedule_visit(
    conn: AsyncConnection,
    *,
    appointment_id: str,
    starts_at: datetime,
    reason: str,
    actor: str,
    ring: KeyRing,
    now: datetime,
) -> AppointmentRow:
    appointment = await appointments.reschedule(
        conn,
        appointment_id=appointment_id,
        starts_at=starts_at,
        reason=reason,
        actor=actor,
        now=now,
        ring=ring,
    )
    await _move_to_booked(conn, appointment, actor=actor, reason=reason, ring=ring, now=now)
    await visit_booked(conn, appointment, ring=ring, now=now)
    return appointment


async def cancel_visit(
    conn: AsyncConnection,
    *,
    appointment_id: str,
    reason: str,
    actor: str,
    ring: KeyRing,
    now: datetime,
) -> AppointmentRow:
    appointment = await appointments.cancel(
        conn, appointment_id=appointment_id, reason=reason, actor=actor, now=now, ring=ring
    )
    await visit_cancelled(conn, appointment, ring=ring, now=now)
    return appointment


async def _move_to_booked(
    conn: AsyncConnection,
    appointment: AppointmentRow,
    *,
    actor: str,
    reason: str | None,
    ring: KeyRing,
    now: datetime,
) -> None:
    await moves.move_referral(
        conn,
        referral_id=appointment.referral_id,
        to="booked",
        actor=actor,
        reason=reason,
        appointment=AppointmentChange(
            scheduled_at=appointment.starts_at, care_mode=appointment.care_mode
        ),
        ring=ring,
        now=now,
    )
