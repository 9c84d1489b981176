"""Moving a referral through its state machine, and telling the partner.

``referrals.transitions`` applies a move (row, history, contact tasks) and says which event it
makes; this writes that event to the outbox in the same transaction.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.events.outbox import NewEvent, record_events
from rehabref.referrals.event_data import callback_targets
from rehabref.referrals.rows import ReferralRow
from rehabref.referrals.transitions import AppointmentChange, Move, PaymentChange, transition


async def move_referral(
    conn: AsyncConnection,
    *,
    referral_id: str,
    to: str,
    actor: str,
    reason: str | None = None,
    appointment: AppointmentChange | None = None,
    payment: PaymentChange | None = None,
    now: datetime | None = None,
) -> ReferralRow:
    """Apply one move and record its event; raises ApiError 404, 409 or 422."""
    move = await transition(
        conn,
        referral_id=referral_id,
        to=to,
        actor=actor,
        reason=reason,
        appointment=appointment,
        payment=payment,
        now=now,
    )
    await record_move(conn, move)
    return move.referral


async def record_move(conn: AsyncConnection, move: Move) -> None:
    referral = move.referral
    await record_events(
        conn,
        partner_id=referral.partner_id,
        environment=referral.environment,
        events=[
            NewEvent(
                move.event_type,
                move.data,
                referral.id,
                extra_targets=callback_targets(referral),
                occurred_at=move.at,
            )
        ],
    )
