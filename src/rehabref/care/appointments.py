"""Appointments: visits booked into a physiotherapist's free slot, moved, cancelled, attended.

Statuses (an illegal move is 409 ``invalid_transition``)::

    booked -> attended | cancelled | rescheduled
    attended, cancelled, rescheduled: terminal (a reschedule books a new appointment)

Threat: two patients given the same slot. A booking locks the physiotherapist's row (so
bookings of one physiotherapist are serialised on PostgreSQL; SQLite has one writer), checks
the slot against the schedule (``availability.Schedule.refusal``) and inserts; the unique
index ``uq_appointments_slot`` refuses a second holder of the slot whatever happens above it,
and that refusal is the same 409 ``slot_unavailable``. Each booking also schedules the care
session its visit is recorded in. Services never commit.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.care import sessions
from rehabref.care.availability_store import appointments, schedule_of
from rehabref.care.rows import AppointmentRow, BookablePhysio
from rehabref.care.sealing import change_reason, sealed_change_reason
from rehabref.clock import as_utc, iso
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.errors import ApiError
from rehabref.ids import new_id
from rehabref.referrals.rows import ReferralRow
from rehabref.referrals.transitions import APPOINTMENT_MODES, lock_referral
from rehabref.tables.matching import Physiotherapist
from rehabref.tables.referrals import Referral

_physios = table(Physiotherapist)
_referrals = table(Referral)
SESSION_TYPE = "Home or clinic visit"
# Referral statuses past booking: a visit is no longer booked for them.
UNBOOKABLE = frozenset({"closed", "cancelled", "attended", "paid"})
MODALITY_OF = {"face_to_face": "home_visit", "remote": "remote"}


def slot_unavailable(message: str) -> ApiError:
    return ApiError(409, "slot_unavailable", message, fields={"starts_at": message})


def _invalid(field: str, message: str) -> ApiError:
    return ApiError(
        422,
        "validation_error",
        "Some fields are invalid; see error.fields.",
        fields={field: message},
    )


async def get_appointment(
    conn: AsyncConnection, appointment_id: str, *, lock: bool = False
) -> AppointmentRow:
    query = select(appointments).where(appointments.c.id == appointment_id)
    row = (await conn.execute(query.with_for_update() if lock else query)).first()
    if row is None:
        raise ApiError(404, "not_found", "No appointment with this identifier.")
    return row


async def booked_for_referral(conn: AsyncConnection, referral_id: str) -> AppointmentRow | None:
    return (
        await conn.execute(
            select(appointments).where(
                appointments.c.referral_id == referral_id, appointments.c.status == "booked"
            )
        )
    ).first()


async def for_referral(conn: AsyncConnection, referral_id: str) -> list[AppointmentRow]:
    query = (
        select(appointments)
        .where(appointments.c.referral_id == referral_id)
        .order_by(appointments.c.starts_at, appointments.c.id)
    )
    return list((await conn.execute(query)).all())


async def _lock_physio(
    conn: AsyncConnection, physio_id: str, referral: ReferralRow
) -> BookablePhysio:
    physio = (
        await conn.execute(select(_physios).where(_physios.c.id == physio_id).with_for_update())
    ).first()
    in_roster = physio is not None and (
        physio.environment == referral.environment
        and physio.partner_id in (None, referral.partner_id)
    )
    if physio is None or not in_roster or not physio.active:
        raise _invalid("physio_id", "No active physiotherapist with this identifier.")
    return physio


async def _insert(conn: AsyncConnection, values: dict[str, Any]) -> None:
    """Insert one appointment; the slot's unique index turns a second holder into a 409."""
    try:
        async with conn.begin_nested():
            await conn.execute(appointments.insert(), values)
    except IntegrityError as error:
        raise slot_unavailable("The slot is already booked.") from error


async def book(
    conn: AsyncConnection,
    *,
    referral_id: str,
    physio_id: str | None,
    starts_at: datetime,
    care_mode: str,
    actor: str,
    now: datetime,
) -> AppointmentRow:
    """Book the referral's visit into a free slot and schedule its care session."""
    referral = await lock_referral(conn, referral_id)
    if referral is None:
        raise ApiError(404, "not_found", "No referral with this identifier.")
    if referral.status in UNBOOKABLE:
        raise ApiError(
            409, "invalid_transition", f"A referral in status {referral.status} cannot be booked."
        )
    allowed = APPOINTMENT_MODES.get(referral.care_mode, APPOINTMENT_MODES[None])
    if care_mode not in allowed:
        raise _invalid("care_mode", f"The referral allows: {', '.join(sorted(allowed))}.")
    if await booked_for_referral(conn, referral_id) is not None:
        raise ApiError(
            409,
            "invalid_transition",
            "The referral already has a booked visit; reschedule or cancel it.",
        )
    physio_id = physio_id or referral.assigned_physio_id
    if physio_id is None:
        raise _invalid("physio_id", "The referral has no physiotherapist; match or assign one.")
    physio = await _lock_physio(conn, physio_id, referral)
    return await _book_slot(
        conn,
        referral=referral,
        physio=physio,
        starts_at=starts_at,
        care_mode=care_mode,
        actor=actor,
        now=now,
        session_id=None,
    )


async def _book_slot(
    conn: AsyncConnection,
    *,
    referral: ReferralRow,
    physio: BookablePhysio,
    starts_at: datetime,
    care_mode: str,
    actor: str,
    now: datetime,
    session_id: str | None,
) -> AppointmentRow:
    when = as_utc(starts_at).replace(microsecond=0)
    schedule = await schedule_of(conn, physio_id=physio.id, start=when, end=when)
    refusal = schedule.refusal(when, now=now)
    if refusal is not None:
        raise slot_unavailable(refusal)
    slot = schedule.slot_at(when)
    assert slot is not None  # refusal() said the slot exists
    if session_id is None:
        session_id = await sessions.schedule_session(
            conn,
            referral_id=referral.id,
            scheduled_at=when,
            modality=MODALITY_OF[care_mode],
            session_type=SESSION_TYPE,
            actor=actor,
            physio_id=physio.id,
        )
    appointment_id = new_id("apt")
    await _insert(
        conn,
        {
            "id": appointment_id,
            "referral_id": referral.id,
            "physio_id": physio.id,
            "partner_id": referral.partner_id,
            "environment": referral.environment,
            "starts_at": when,
            "ends_at": slot.ends_at,
            "care_mode": care_mode,
            "status": "booked",
            "session_id": session_id,
            "created_by": actor,
            "updated_by": actor,
            "created_at": now,
            "updated_at": now,
        },
    )
    return await get_appointment(conn, appointment_id)


def _check_booked(row: AppointmentRow) -> None:
    if row.status != "booked":
        raise ApiError(
            409,
            "invalid_transition",
            f"The appointment is {row.status}; only a booked appointment can change.",
        )


async def reschedule(
    conn: AsyncConnection,
    *,
    appointment_id: str,
    starts_at: datetime,
    reason: str,
    actor: str,
    now: datetime,
    ring: KeyRing,
) -> AppointmentRow:
    """Move a booked visit to another free slot of the same physiotherapist: the old
    appointment becomes ``rescheduled`` (its slot is free again), a new one is booked, and the
    care session moves with it."""
    referral = await _referral_of(conn, appointment_id)
    old = await get_appointment(conn, appointment_id, lock=True)
    _check_booked(old)
    physio = await _lock_physio(conn, old.physio_id, referral)
    await _set_status(
        conn,
        old.id,
        "rescheduled",
        sealed_reason=sealed_change_reason(ring, reason),
        actor=actor,
        now=now,
    )
    new = await _book_slot(
        conn,
        referral=referral,
        physio=physio,
        starts_at=starts_at,
        care_mode=old.care_mode,
        actor=actor,
        now=now,
        session_id=old.session_id,
    )
    await conn.execute(
        update(appointments).where(appointments.c.id == old.id).values(replaced_by=new.id)
    )
    if old.session_id is not None:
        await sessions.move_session(
            conn, session_id=old.session_id, scheduled_at=new.starts_at, actor=actor
        )
    return new


async def _referral_of(conn: AsyncConnection, appointment_id: str) -> ReferralRow:
    row = await get_appointment(conn, appointment_id)
    referral = await lock_referral(conn, row.referral_id)
    assert referral is not None  # foreign key
    return referral


async def _set_status(
    conn: AsyncConnection,
    appointment_id: str,
    status: str,
    *,
    sealed_reason: str | None,
    actor: str,
    now: datetime,
    **extra: Any,
) -> None:
    """``sealed_reason``: why, already sealed (``care.sealing.sealed_change_reason``)."""
    await conn.execute(
        update(appointments)
        .where(appointments.c.id == appointment_id)
        .values(
            status=status,
            change_reason=sealed_reason,
            updated_by=actor,
            updated_at=now,
            **extra,
        )
    )


async def cancel(
    conn: AsyncConnection,
    *,
    appointment_id: str,
    reason: str,
    actor: str,
    now: datetime,
    ring: KeyRing,
) -> AppointmentRow:
    """Cancel a booked visit (its slot is free again, its scheduled session cancelled); the
    referral stays open and waits for a new booking (``appointment_status: cancelled``)."""
    await _referral_of(conn, appointment_id)
    row = await get_appointment(conn, appointment_id, lock=True)
    _check_booked(row)
    await _release(conn, row, reason=reason, actor=actor, now=now, ring=ring)
    await conn.execute(
        update(_referrals)
        .where(_referrals.c.id == row.referral_id)
        .values(appointment_status="cancelled", updated_at=now)
    )
    return await get_appointment(conn, appointment_id)


async def _release(
    conn: AsyncConnection,
    row: AppointmentRow,
    *,
    reason: str,
    actor: str,
    now: datetime,
    ring: KeyRing,
) -> None:
    await _set_status(
        conn,
        row.id,
        "cancelled",
        sealed_reason=sealed_change_reason(ring, reason),
        actor=actor,
        now=now,
    )
    if row.session_id is not None:
        session = await sessions.get_session(conn, session_id=row.session_id)
        if session.status == "scheduled":
            await sessions.cancel_session(
                conn, session_id=row.session_id, reason=reason, actor=actor, ring=ring
            )


async def release_for_referral(
    conn: AsyncConnection,
    *,
    referral_id: str,
    reason: str,
    actor: str,
    now: datetime,
    ring: KeyRing,
) -> None:
    """The referral ended: its booked visit is cancelled and its slot freed."""
    row = await booked_for_referral(conn, referral_id)
    if row is not None:
        await _release(conn, row, reason=reason, actor=actor, now=now, ring=ring)


async def mark_attended(
    conn: AsyncConnection, *, referral_id: str, via: str, actor: str, now: datetime
) -> AppointmentRow | None:
    """The referral's booked visit took place (``via``: check_in or override); never before
    its slot starts."""
    row = await booked_for_referral(conn, referral_id)
    if row is None:
        return None
    if as_utc(now) < as_utc(row.starts_at):
        raise ApiError(
            409,
            "invalid_transition",
            "The visit has not started yet; it can be attended from its booked time.",
        )
    await _set_status(
        conn,
        row.id,
        "attended",
        sealed_reason=None,
        actor=actor,
        now=now,
        attended_via=via,
        attended_at=now,
    )
    return await get_appointment(conn, row.id)


def appointment_view(ring: KeyRing, row: AppointmentRow) -> dict[str, Any]:
    return {
        "appointment_id": row.id,
        "referral_id": row.referral_id,
        "physio_id": row.physio_id,
        "starts_at": iso(row.starts_at),
        "ends_at": iso(row.ends_at),
        "care_mode": row.care_mode,
        "status": row.status,
        "session_id": row.session_id,
        "change_reason": change_reason(ring, row.change_reason),
        "replaced_by": row.replaced_by,
        "attended_via": row.attended_via,
        "attended_at": iso(row.attended_at),
    }
