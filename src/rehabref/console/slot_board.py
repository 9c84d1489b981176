"""The slot part of the console's referral page: the free slots of the referral's
physiotherapist, a week at a time in Lagos time (the physiotherapists' windows are Lagos
time), the referral's appointments and the slots offered to the patient in the conversation.
Read only; the forms are ``console/slots.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta
from types import SimpleNamespace

from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.care import appointments, slot_offers
from rehabref.care.availability import LAGOS
from rehabref.care.availability_store import schedule_of, windows_of
from rehabref.care.sealing import opened_appointment
from rehabref.clock import as_utc, iso
from rehabref.crypto import KeyRing
from rehabref.referrals.rows import ReferralRow

WEEKS_AHEAD = 8  # how far "Show next week" goes
MODE_LABELS = {"face_to_face": "in person", "remote": "video session"}
# How each slot-offer status reads to a coordinator (care/slot_offers.py).
OFFER_LABELS = {
    "open": "waiting for the patient's reply",
    "booked": "booked",
    "taken": "chosen slot was taken; a fresh offer followed",
    "declined": "patient asked for other times",
    "unclear": "reply not understood; handed to a coordinator",
    "expired": "no reply in time",
    "superseded": "booked or ended another way",
}


@dataclass(frozen=True)
class SlotChoice:
    value: str  # ISO 8601 UTC, what the form posts
    label: str  # "09:00" (Lagos)
    ends: str


@dataclass(frozen=True)
class SlotDay:
    heading: str  # "Tuesday 25 November"
    slots: list[SlotChoice]


@dataclass(frozen=True)
class SlotBoard:
    """What the referral page shows about slots and appointments."""

    week: int
    heading: str  # "Tuesday 25 November - Monday 1 December"
    days: list[SlotDay]
    published: bool  # the physiotherapist published weekly windows
    appointments: list[SimpleNamespace]  # change reasons opened
    booked: SimpleNamespace | None


@dataclass(frozen=True)
class OfferShown:
    """A slot offer as a coordinator reads it: when it was sent, the times in the order the
    patient saw them, which one was booked, and how it was answered."""

    sent: str
    channel: str
    times: list[str]
    booked_number: int | None  # 1-3: the time the patient booked
    status: str  # open | booked | taken | declined | unclear | expired | superseded
    expires: str


async def offers_shown(
    conn: AsyncConnection, board: SlotBoard, referral_id: str
) -> list[OfferShown]:
    """The referral's slot offers, newest first (``board``: its appointments)."""
    rows = await slot_offers.for_referral(conn, referral_id)
    booked = {row.id: row.starts_at for row in board.appointments}
    shown = []
    for offer in reversed(rows):
        starts = slot_offers.starts_of(offer)
        chosen = booked.get(offer.appointment_id) if offer.appointment_id else None
        number = starts.index(as_utc(chosen)) + 1 if chosen and as_utc(chosen) in starts else None
        shown.append(
            OfferShown(
                sent=lagos_time(offer.created_at),
                channel=offer.channel,
                times=[lagos_time(start) for start in starts],
                booked_number=number,
                status=offer.status,
                expires=lagos_time(offer.expires_at),
            )
        )
    return shown


def lagos_time(value: datetime | None) -> str:
    if value is None:
        return ""
    return as_utc(value).astimezone(LAGOS).strftime("%a %d %b %Y, %H:%M WAT")


def week_of(raw: str | None) -> int:
    """The ``week`` query parameter: 0 (this week) to ``WEEKS_AHEAD``; anything else is 0."""
    text = raw or ""
    week = int(text) if text.isascii() and text.isdigit() and len(text) <= 2 else 0
    return week if week <= WEEKS_AHEAD else 0


def _day_heading(when: datetime) -> str:
    return f"{when:%A} {when.day} {when:%B}"


async def slot_board(
    conn: AsyncConnection, ring: KeyRing, referral: ReferralRow, *, week: int, now: datetime
) -> SlotBoard:
    """The free slots of the referral's physiotherapist over the 7 days from today (Lagos)
    plus ``week`` weeks, grouped by day, and the referral's appointments."""
    rows = [
        opened_appointment(ring, row) for row in await appointments.for_referral(conn, referral.id)
    ]
    booked = next((row for row in rows if row.status == "booked"), None)
    first = as_utc(now).astimezone(LAGOS).date() + timedelta(days=7 * week)
    start = datetime.combine(first, time(0), tzinfo=LAGOS)
    end = start + timedelta(days=7)
    heading = f"{_day_heading(start)} - {_day_heading(end - timedelta(days=1))}"
    physio_id = referral.assigned_physio_id
    if physio_id is None or not await windows_of(conn, physio_id):
        return SlotBoard(week, heading, [], False, rows, booked)
    schedule = await schedule_of(conn, physio_id=physio_id, start=start, end=end)
    days: dict[str, list[SlotChoice]] = {}
    for slot in schedule.free_slots(start=start, end=end, now=now):
        local = slot.starts_at.astimezone(LAGOS)
        days.setdefault(_day_heading(local), []).append(
            SlotChoice(
                value=iso(slot.starts_at) or "",
                label=f"{local:%H:%M}",
                ends=f"{slot.ends_at.astimezone(LAGOS):%H:%M}",
            )
        )
    return SlotBoard(week, heading, [SlotDay(h, s) for h, s in days.items()], True, rows, booked)
