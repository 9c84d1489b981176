"""Messages to the physiotherapist: a new or moved visit, a cancelled one, and a reminder the
day before, by SMS to the phone in the registry (their e-mail when they have no phone).

They carry only what the visit needs: the patient's first name, area, time and care mode —
never the diagnosis. They are sent without a referral id, so the worker never appends the
patient's consent-withdrawal link to a message meant for the physiotherapist. WhatsApp is not
used here: outside a 24-hour window it needs approved templates, and SMS reaches every phone.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.care.appointments import get_appointment
from rehabref.care.rows import AppointmentRow
from rehabref.channels.content import Channel, Reply
from rehabref.channels.outbox import enqueue
from rehabref.clock import as_utc, iso
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.errors import ApiError
from rehabref.jobs import enqueue as enqueue_job
from rehabref.matching.rows import PhysioRow
from rehabref.referrals.sealing import FIRST_NAME, open_text
from rehabref.tables.matching import Physiotherapist
from rehabref.tables.referrals import Referral
from rehabref.workflows.appointment_messages import MODE_WORDS, REMIND_BEFORE, visit_time

REMINDER_JOB = "physio.visit_reminder"
_physios = table(Physiotherapist)
_referrals = table(Referral)


def physio_address(physio: PhysioRow) -> tuple[Channel, str] | None:
    if physio.phone:
        return "sms", str(physio.phone)
    if physio.email:
        return "email", str(physio.email)
    return None


def visit_line(first_name: str, area: str, starts_at: datetime, care_mode: str) -> str:
    mode = MODE_WORDS["en"].get(care_mode, care_mode.replace("_", " "))
    return f"{first_name} ({area}), {visit_time(starts_at)}, {mode}"


async def _tell(
    conn: AsyncConnection,
    appointment: AppointmentRow,
    *,
    opening: str,
    purpose: str,
    ring: KeyRing,
    now: datetime,
) -> bool:
    physio = (
        await conn.execute(select(_physios).where(_physios.c.id == appointment.physio_id))
    ).one()
    address = physio_address(physio)
    referral = (
        await conn.execute(
            select(
                _referrals.c.patient_first_name,
                _referrals.c.patient_area,
                _referrals.c.patient_city,
            ).where(_referrals.c.id == appointment.referral_id)
        )
    ).one()
    if address is None:
        return False
    channel, to = address
    area = referral.patient_area or referral.patient_city
    first_name = open_text(ring, FIRST_NAME, referral.patient_first_name) or ""
    line = visit_line(first_name, area, appointment.starts_at, appointment.care_mode)
    text = f"{opening}: {line}."
    await enqueue(
        conn,
        ring,
        channel=channel,
        to=to,
        content=Reply(text=text, subject="Your physiotherapy visits"),
        purpose=purpose,
        environment=appointment.environment,
        referral_id=None,
        now=now,
    )
    return True


async def visit_booked(
    conn: AsyncConnection, appointment: AppointmentRow, *, ring: KeyRing, now: datetime
) -> None:
    """Tell the physiotherapist of a new (or moved) visit and plan their reminder."""
    if not await _tell(
        conn,
        appointment,
        opening="New visit booked",
        purpose="physio.visit_booked",
        ring=ring,
        now=now,
    ):
        return
    remind_at = as_utc(appointment.starts_at) - REMIND_BEFORE
    if remind_at > now:
        await enqueue_job(
            conn,
            kind=REMINDER_JOB,
            payload={"appointment_id": appointment.id, "starts_at": iso(appointment.starts_at)},
            due_at=remind_at,
            now=now,
        )


async def visit_cancelled(
    conn: AsyncConnection, appointment: AppointmentRow, *, ring: KeyRing, now: datetime
) -> None:
    await _tell(
        conn,
        appointment,
        opening="Visit cancelled",
        purpose="physio.visit_cancelled",
        ring=ring,
        now=now,
    )


async def send_reminder(
    conn: AsyncConnection, payload: dict[str, Any], now: datetime, *, ring: KeyRing
) -> None:
    """The ``physio.visit_reminder`` job: only for a visit still booked at the planned time."""
    try:
        appointment = await get_appointment(conn, str(payload["appointment_id"]))
    except ApiError:
        return
    if appointment.status != "booked" or iso(appointment.starts_at) != payload.get("starts_at"):
        return
    await _tell(
        conn,
        appointment,
        opening="Reminder, visit tomorrow",
        purpose="physio.visit_reminder",
        ring=ring,
        now=now,
    )
