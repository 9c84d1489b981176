"""The patient books their first visit in the assistant conversation: three free slots of the
matched physiotherapist are offered right after the intake, and the patient's number books
one through the same booking workflow a coordinator uses.

- ``offer_after_intake``: the intake completed by a message and matching assigned a
  physiotherapist; the earliest free slots that fit the patient's answer
  (``care.slot_choice``) are stored (``care.slot_offers``) and returned as the message that
  closes the intake; no fitting slot opens a coordinator task ``no_free_slots``.
- ``answer_offer``: the patient's reply to an open offer. A number books exactly the slot
  shown under it (``workflows.booking.book_visit``: ``appointment.booked``, the patient's
  confirmation, the physiotherapist's message); a slot given to someone else meanwhile gets
  a fresh offer; "0", HELP or an answer not understood hand over to a coordinator
  (``slot_offer_declined``, ``slot_offer_unclear``); an expired offer books nothing
  (``slot_offer_expired``).
- ``expire_offer``: the ``slot_offer.expire`` job at the offer's expiry: still unanswered,
  a coordinator calls (task ``slot_offer_expired``). Nothing is sent then: the WhatsApp
  24-hour window has closed, and free text would be refused.

Threat: a reply booking a slot that was not shown, was shown under another number, or was
offered too long ago; or a patient left waiting without anyone knowing. Replies are returned
to the caller, which writes them to the outbox in the same transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.audit.trail import entry, record
from rehabref.care import slot_offers
from rehabref.care.availability_store import schedule_of
from rehabref.care.rows import SlotOfferRow
from rehabref.care.slot_choice import OFFER_HORIZON, choose_slots, expires_at
from rehabref.channels.content import Reply
from rehabref.clock import as_utc
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.eligibility.adapters import CoverageSources
from rehabref.errors import ApiError
from rehabref.intake import answers, prompts
from rehabref.intake.conversation import State
from rehabref.intake.phrases import LANGUAGES, Language
from rehabref.jobs import enqueue as enqueue_job
from rehabref.referrals.rows import ReferralRow
from rehabref.referrals.sealing import FIRST_NAME, open_text
from rehabref.referrals.tasks import open_task_once
from rehabref.referrals.transitions import lock_referral
from rehabref.tables.matching import Physiotherapist
from rehabref.workflows.appointment_messages import visit_time
from rehabref.workflows.booking import book_visit

EXPIRE_JOB = "slot_offer.expire"
OFFER_PURPOSE = "booking.offer"  # the outbound messages' purpose
# Why a coordinator is asked to call and book (contact task purposes).
TASK_NO_SLOTS = "no_free_slots"
TASK_DECLINED = "slot_offer_declined"
TASK_UNCLEAR = "slot_offer_unclear"
TASK_EXPIRED = "slot_offer_expired"
_physios = table(Physiotherapist)


def appointment_mode(intake_care_mode: str | None) -> str:
    """The intake's answer (home_visit, in_clinic, remote) as an appointment's care mode."""
    return "remote" if intake_care_mode == "remote" else "face_to_face"


def _language(value: str) -> Language:
    return next((language for language in LANGUAGES if language == value), "en")


async def _physio_name(conn: AsyncConnection, physio_id: str) -> str:
    name = (
        await conn.execute(select(_physios.c.name).where(_physios.c.id == physio_id))
    ).scalar_one()
    return str(name)


def _first_name(ring: KeyRing, referral: ReferralRow) -> str:
    """The patient's first name, sealed at rest, for the message only."""
    return open_text(ring, FIRST_NAME, referral.patient_first_name) or ""


async def _make_offer(
    conn: AsyncConnection,
    *,
    referral: ReferralRow,
    physio_id: str,
    availability: tuple[str, ...],
    language: Language,
    care_mode: str,
    channel: str,
    again: bool,
    ring: KeyRing,
    now: datetime,
) -> Reply | None:
    """Store and word a new offer; None when no free slot fits."""
    schedule = await schedule_of(conn, physio_id=physio_id, start=now, end=now + OFFER_HORIZON)
    free = schedule.free_slots(start=now, end=now + OFFER_HORIZON, now=now)
    slots = choose_slots(free, availability=availability, now=now)
    if not slots:
        return None
    offer_id = await slot_offers.create(
        conn,
        referral_id=referral.id,
        physio_id=physio_id,
        environment=referral.environment,
        channel=channel,
        language=language,
        care_mode=care_mode,
        slots=slots,
        expires_at=expires_at(now),
        now=now,
    )
    await enqueue_job(
        conn,
        kind=EXPIRE_JOB,
        payload={"offer_id": offer_id},
        due_at=expires_at(now),
        referral_id=referral.id,
        now=now,
    )
    return prompts.slot_offer(
        language,
        times=[visit_time(slot.starts_at) for slot in slots],
        physio_name=await _physio_name(conn, physio_id),
        first_name=_first_name(ring, referral),
        again=again,
    )


async def offer_after_intake(
    conn: AsyncConnection,
    *,
    referral: ReferralRow,
    physio_id: str,
    state: State,
    channel: str,
    ring: KeyRing,
    now: datetime,
) -> Reply:
    """The message that closes an intake completed by message once a physiotherapist is
    matched: three free slots to choose from, or (none fits) a coordinator will call."""
    offer = await _make_offer(
        conn,
        referral=referral,
        physio_id=physio_id,
        availability=state.availability,
        language=state.language,
        care_mode=appointment_mode(state.care_mode),
        channel=channel,
        again=False,
        ring=ring,
        now=now,
    )
    if offer is not None:
        return offer
    await open_task_once(conn, referral=referral, purpose=TASK_NO_SLOTS, now=now)
    return prompts.booking_handover(
        state.language, "offer_none", first_name=_first_name(ring, referral)
    )


async def _hand_over(
    conn: AsyncConnection,
    *,
    referral: ReferralRow,
    offer: SlotOfferRow,
    status: str,
    task: str,
    why: prompts.BookingHandover,
    ring: KeyRing,
    now: datetime,
) -> Reply:
    await slot_offers.settle(conn, offer_id=offer.id, status=status, now=now)
    await open_task_once(conn, referral=referral, purpose=task, now=now)
    return prompts.booking_handover(
        _language(offer.language), why, first_name=_first_name(ring, referral)
    )


async def answer_offer(
    conn: AsyncConnection,
    *,
    referral: ReferralRow,
    offer: SlotOfferRow,
    inbound: Mapping[Any, Any],
    availability: tuple[str, ...],
    now: datetime,
    coverage: CoverageSources,
    ring: KeyRing,
) -> Reply | None:
    """The patient's reply to their open offer (referral and offer locked by the caller);
    what to answer, or None when the booking's own confirmation is the answer."""
    if now >= as_utc(offer.expires_at):
        return await _hand_over(
            conn,
            referral=referral,
            offer=offer,
            status="expired",
            task=TASK_EXPIRED,
            why="offer_expired",
            ring=ring,
            now=now,
        )
    starts = slot_offers.starts_of(offer)
    text, tapped = inbound["text"], (inbound["choice_id"],) if inbound["choice_id"] else ()
    number = (
        0 if answers.asks_for_person(text, tapped) else answers.offered_number(text, len(starts))
    )
    if number is None or number == 0:
        declined = number == 0
        return await _hand_over(
            conn,
            referral=referral,
            offer=offer,
            status="declined" if declined else "unclear",
            task=TASK_DECLINED if declined else TASK_UNCLEAR,
            why="offer_declined" if declined else "offer_unclear",
            ring=ring,
            now=now,
        )
    actor = f"patient:{inbound['channel']}"
    try:
        # A refused booking leaves nothing behind. The offer is settled first: the booking's
        # move to booked supersedes whatever offer is still open.
        async with conn.begin_nested():
            await slot_offers.settle(conn, offer_id=offer.id, status="booked", now=now)
            appointment = await book_visit(
                conn,
                referral_id=referral.id,
                physio_id=offer.physio_id,
                starts_at=starts[number - 1],
                care_mode=offer.care_mode,
                actor=actor,
                reason="chosen by the patient from the offered slots",
                now=now,
                coverage=coverage,
                ring=ring,
            )
            await slot_offers.attach_appointment(
                conn, offer_id=offer.id, appointment_id=appointment.id
            )
    except ApiError as refused:
        if refused.code != "slot_unavailable":  # booked or changed another way meanwhile
            return await _hand_over(
                conn,
                referral=referral,
                offer=offer,
                status="superseded",
                task="patient_message",
                why="offer_declined",
                ring=ring,
                now=now,
            )
        await slot_offers.settle(conn, offer_id=offer.id, status="taken", now=now)
        fresh = await _make_offer(
            conn,
            referral=referral,
            physio_id=offer.physio_id,
            availability=availability,
            language=_language(offer.language),
            care_mode=offer.care_mode,
            channel=offer.channel,
            again=True,
            ring=ring,
            now=now,
        )
        if fresh is not None:
            return fresh
        await open_task_once(conn, referral=referral, purpose=TASK_NO_SLOTS, now=now)
        return prompts.booking_handover(
            _language(offer.language), "offer_declined", first_name=_first_name(ring, referral)
        )
    await record(
        conn, entry(actor, "appointment.booked", referral_id=referral.id, subject=appointment.id)
    )
    return None


async def expire_offer(conn: AsyncConnection, payload: dict[str, Any], now: datetime) -> None:
    """The ``slot_offer.expire`` job: an offer still open at its expiry goes to a
    coordinator; one answered meanwhile is left as it is."""
    found = await slot_offers.get(conn, str(payload["offer_id"]), lock=False)
    if found is None or found.status != "open":
        return
    # The referral first, then its offer: the order every writer keeps.
    referral = await lock_referral(conn, found.referral_id)
    offer = await slot_offers.get(conn, found.id)
    if referral is None or offer is None or offer.status != "open":
        return
    if now < as_utc(offer.expires_at):
        return
    await slot_offers.settle(conn, offer_id=offer.id, status="expired", now=now)
    await open_task_once(conn, referral=referral, purpose=TASK_EXPIRED, now=now)
