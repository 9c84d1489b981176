"""Appointment messages to the patient: a confirmation when a visit is booked (or moved) and
a reminder the day before, on the channel their conversation used.

A patient who was never messaged (``route: contact``, or no provider for their channel) has
no conversation: the coordinator who booked them by phone tells them, and nothing is sent.
WhatsApp allows only approved templates outside the 24 hours after the patient's last
message, so both go out as templates (``rehabref_appointment_confirmed``,
``rehabref_appointment_reminder``); SMS and e-mail say the same words. Times are Lagos time.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.channels.content import Template
from rehabref.channels.outbox import enqueue
from rehabref.clock import as_utc, iso
from rehabref.crypto import KeyRing
from rehabref.intake import conversation_store as conversations
from rehabref.jobs import enqueue as enqueue_job
from rehabref.referrals.rows import ReferralRow
from rehabref.referrals.sealing import FIRST_NAME, open_text
from rehabref.referrals.transitions import lock_referral
from rehabref.workflows.first_contact import patient_address

REMINDER_JOB = "appointment.reminder"
REMIND_BEFORE = timedelta(hours=24)
LAGOS = timezone(timedelta(hours=1), "WAT")

# Appointment care modes (the state machine's) and the patient's intake answers.
MODE_WORDS = {
    "en": {
        "face_to_face": "in person",
        "remote": "video session",
        "home_visit": "home visit",
        "in_clinic": "at the clinic",
    },
    "pcm": {
        "face_to_face": "face to face",
        "remote": "video call",
        "home_visit": "for your house",
        "in_clinic": "for clinic",
    },
}
CONFIRMED = {
    "en": "Hello {name}, your physiotherapy visit is booked for {when} ({mode}). "
    "Reply HELP if you need to change it.",
    "pcm": "{name}, we don book your physio visit for {when} ({mode}). "
    "If you wan change am, reply HELP.",
}
REMINDER = {
    "en": "Reminder: {name}, your physiotherapy visit is tomorrow, {when} ({mode}). "
    "Reply HELP if you cannot make it.",
    "pcm": "{name}, no forget: your physio visit na tomorrow, {when} ({mode}). "
    "If you no fit come, reply HELP.",
}


def visit_time(scheduled_at: datetime) -> str:
    """``Tue 25 Nov, 10:00`` in Lagos time."""
    return as_utc(scheduled_at).astimezone(LAGOS).strftime("%a %d %b, %H:%M")


def appointment_template(
    kind: str, *, language: str, name: str, scheduled_at: datetime, care_mode: str
) -> Template:
    words = CONFIRMED if kind == "confirmed" else REMINDER
    language = language if language in words else "en"
    when = visit_time(scheduled_at)
    mode = MODE_WORDS[language].get(care_mode, care_mode.replace("_", " "))
    return Template(
        name=f"rehabref_appointment_{kind}",
        language="en",
        parameters=(name, when, mode),
        text=words[language].format(name=name, when=when, mode=mode),
    )


async def _send(
    conn: AsyncConnection,
    ring: KeyRing,
    referral: ReferralRow,
    conversation: Mapping[Any, Any],
    *,
    kind: str,
    now: datetime,
) -> bool:
    reached = patient_address(ring, referral, conversation["channel"])
    scheduled_at = referral.appointment_scheduled_at
    if reached is None or scheduled_at is None:
        return False
    channel, to = reached
    language = str((conversation["state"] or {}).get("language", "en"))
    content = appointment_template(
        kind,
        language=language,
        name=open_text(ring, FIRST_NAME, referral.patient_first_name) or "",
        scheduled_at=scheduled_at,
        care_mode=referral.appointment_care_mode or "face_to_face",
    )
    await enqueue(
        conn,
        ring,
        channel=channel,
        to=to,
        content=content,
        purpose=f"appointment.{kind}",
        environment=referral.environment,
        referral_id=referral.id,
        now=now,
    )
    return True


async def appointment_booked(
    conn: AsyncConnection, referral: ReferralRow, now: datetime, *, ring: KeyRing
) -> None:
    """Confirm a (re)booked visit and plan its reminder for the day before."""
    conversation = await conversations.for_referral(conn, ring, referral.id)
    scheduled_at = referral.appointment_scheduled_at
    if conversation is None or scheduled_at is None:
        return
    if not await _send(conn, ring, referral, conversation, kind="confirmed", now=now):
        return
    remind_at = as_utc(scheduled_at) - REMIND_BEFORE
    if remind_at > now:
        await enqueue_job(
            conn,
            kind=REMINDER_JOB,
            payload={"referral_id": referral.id, "scheduled_at": iso(scheduled_at)},
            due_at=remind_at,
            referral_id=referral.id,
            now=now,
        )


async def send_reminder(
    conn: AsyncConnection, payload: dict[str, Any], now: datetime, *, ring: KeyRing
) -> None:
    """The ``appointment.reminder`` job: only for the visit it was planned for (a visit moved
    or cancelled since then gets no reminder from it)."""
    referral = await lock_referral(conn, str(payload["referral_id"]))
    if referral is None or referral.status != "booked" or referral.appointment_status != "booked":
        return
    scheduled_at = referral.appointment_scheduled_at
    if scheduled_at is None or iso(scheduled_at) != payload.get("scheduled_at"):
        return
    conversation = await conversations.for_referral(conn, ring, referral.id)
    if conversation is not None:
        await _send(conn, ring, referral, conversation, kind="reminder", now=now)
