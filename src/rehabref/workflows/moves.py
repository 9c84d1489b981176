"""Moving a referral through its state machine, and telling the partner.

``referrals.transitions`` applies a move (row, history, contact tasks) and says which event it
makes; this writes that event to the outbox, what the patient is told, and the move's audit
record (``referral.moved``, whoever moved it: ops API, console or a job), in the same
transaction. A move to ``attended`` also applies a card payment held until then
(``workflows.payments``): the referral then moves on to ``paid`` in the same transaction;
a move to ``closed`` or ``cancelled`` hands such a payment to a coordinator.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.audit import trail as audit
from rehabref.care import appointments, slot_offers
from rehabref.channels.outbox import cancel_waiting
from rehabref.crypto import KeyRing
from rehabref.intake import conversation_store as conversations
from rehabref.referrals.rows import ReferralRow
from rehabref.referrals.transitions import AppointmentChange, Move, PaymentChange, transition
from rehabref.workflows.appointment_messages import appointment_booked
from rehabref.workflows.move_events import record_move
from rehabref.workflows.payments import apply_held_payments, review_held_payments

ENDED = frozenset({"closed", "cancelled"})
INTAKE_OVER = frozenset({"booked", "attended", "paid", "closed", "cancelled"})


async def move_referral(
    conn: AsyncConnection,
    *,
    referral_id: str,
    to: str,
    actor: str,
    reason: str | None = None,
    appointment: AppointmentChange | None = None,
    payment: PaymentChange | None = None,
    ring: KeyRing,
    now: datetime | None = None,
    attended_via: str = "override",
) -> ReferralRow:
    """Apply one move and record its event; raises ApiError 404, 409 or 422.

    A move to ``attended`` marks the booked visit attended (``attended_via``: the
    physiotherapist's check-in, or a coordinator's override with a reason); a referral that
    ends frees its booked slot."""
    move = await transition(
        conn,
        referral_id=referral_id,
        to=to,
        actor=actor,
        ring=ring,
        reason=reason,
        appointment=appointment,
        payment=payment,
        now=now,
    )
    if to == "attended":
        await appointments.mark_attended(
            conn, referral_id=referral_id, via=attended_via, actor=actor, now=move.at
        )
    elif to in ENDED:
        await appointments.release_for_referral(
            conn,
            referral_id=referral_id,
            reason=reason or f"referral {to}",
            actor=actor,
            now=move.at,
            ring=ring,
        )
    await record_move(conn, ring, move)
    await tell_patient(conn, move, ring=ring)
    await audit.record(conn, audit.entry(actor, "referral.moved", referral_id=referral_id, now=now))
    if move.referral.status == "attended":  # a card payment made before the visit now counts
        return await apply_held_payments(conn, ring, move.referral, now=move.at)
    if move.referral.status in ENDED:  # ... or never will: a coordinator decides
        await review_held_payments(conn, move.referral, now=move.at)
    return move.referral


async def tell_patient(conn: AsyncConnection, move: Move, *, ring: KeyRing) -> None:
    """What the patient hears of a move: a booked visit is confirmed (and reminded the day
    before); an ended referral's unsent messages and conversation stop. A booked or ended
    referral's open slot offer books nothing any more."""
    referral = move.referral
    if referral.status in INTAKE_OVER:  # no more intake questions, reminders or offers
        await conversations.close(conn, referral_id=referral.id, now=move.at)
        await slot_offers.supersede_open(conn, referral_id=referral.id, now=move.at)
    if referral.status == "booked":
        await appointment_booked(conn, referral, move.at, ring=ring)
    elif referral.status in ENDED:
        await cancel_waiting(
            conn, referral_id=referral.id, now=move.at, reason=f"the referral is {referral.status}"
        )
