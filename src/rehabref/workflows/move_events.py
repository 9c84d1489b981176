"""The partner's event for an applied move, written to the outbox in the move's transaction.

Its own module so both ``moves`` (every coordinator move) and ``payments`` (the paid move a
verified card payment makes) record moves the same way without importing each other.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.crypto import KeyRing
from rehabref.events.outbox import NewEvent, record_events
from rehabref.referrals.event_data import callback_targets
from rehabref.referrals.transitions import Move


async def record_move(conn: AsyncConnection, ring: KeyRing, move: Move) -> None:
    referral = move.referral
    await record_events(
        conn,
        ring,
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
