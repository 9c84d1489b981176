"""The patient's intake: the assistant opened, the answers given, a physiotherapist matched.

Called by the assistant pages, the sandbox scenarios and the conversation workflow.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.clock import iso, utcnow
from rehabref.crypto import KeyRing
from rehabref.errors import ApiError
from rehabref.events.outbox import NewEvent, record_events
from rehabref.intake import conversation_store as conversations
from rehabref.intake import service as intake
from rehabref.matching.roster import RosterSources
from rehabref.matching.service import match_referral
from rehabref.referrals.event_data import callback_targets, referral_base
from rehabref.referrals.rows import ReferralRow
from rehabref.referrals.transitions import lock_referral
from rehabref.workflows.moves import ENDED, move_referral

# Statuses from which the assistant flow moves the referral to assistant_started.
STARTABLE = frozenset({"received", "contact_pending"})


async def assistant_opened(
    conn: AsyncConnection,
    *,
    session_id: str,
    actor: str,
    ring: KeyRing,
    now: datetime | None = None,
) -> bool:
    """First open of the patient's link: marks it opened and, when the referral is still
    waiting (received / contact_pending), moves it to assistant_started with its
    ``assistant.started`` event. Returns True when this call was the first open."""
    now = now or utcnow()
    referral_id = await intake.mark_opened(conn, session_id=session_id, now=now)
    if referral_id is None:
        return False
    await patient_engaged(
        conn,
        referral_id=referral_id,
        actor=actor,
        ring=ring,
        now=now,
        reason="patient opened the assistant",
    )
    return True


async def patient_engaged(
    conn: AsyncConnection,
    *,
    referral_id: str,
    actor: str,
    ring: KeyRing,
    now: datetime,
    reason: str = "patient answered the assistant",
) -> None:
    """The patient's first answer (a message, or a form sent on the web page): a referral
    still waiting moves to ``assistant_started`` with its ``assistant.started`` event."""
    referral = await lock_referral(conn, referral_id)
    if referral is not None and referral.status in STARTABLE:
        await move_referral(
            conn,
            referral_id=referral_id,
            to="assistant_started",
            actor=actor,
            reason=reason,
            ring=ring,
            now=now,
        )


async def intake_completed(
    conn: AsyncConnection,
    *,
    roster: RosterSources,
    ring: KeyRing,
    referral_id: str,
    availability: str,
    care_mode: str,
    area: str | None,
    actor: str,
    session_id: str | None = None,
    now: datetime | None = None,
) -> str | None:
    """Store the patient's answers, emit ``patient.intake_completed`` and run matching.

    Returns the matched physiotherapist id (None when nobody fits).
    Raises ApiError 409 when the session was completed already.
    """
    now = now or utcnow()
    locked = await lock_referral(conn, referral_id)
    if locked is None:
        raise ApiError(404, "not_found", "No referral with this identifier.")
    referral: ReferralRow = locked
    if referral.status in ENDED:
        raise ApiError(409, "invalid_transition", f"The referral is {referral.status}.")
    await intake.record_answers(
        conn,
        referral_id=referral_id,
        session_id=session_id,
        availability=availability,
        care_mode=care_mode,
        area=area,
        now=now,
    )
    if referral.status in STARTABLE:
        # Answers without a recorded page open (e.g. a messaging reply): the assistant
        # flow has started all the same, so the state machine says so first.
        referral = await move_referral(
            conn,
            referral_id=referral_id,
            to="assistant_started",
            actor=actor,
            reason="patient answered the assistant",
            ring=ring,
            now=now,
        )
        # The intake event strictly after assistant.started, so ordering by time holds.
        now = max(utcnow(), now + timedelta(microseconds=1))
    data = referral_base(referral)
    data.update(intake_status="completed", completed_at=iso(now))
    await record_events(
        conn,
        ring,
        partner_id=referral.partner_id,
        environment=referral.environment,
        events=[
            NewEvent(
                "patient.intake_completed",
                data,
                referral_id,
                extra_targets=callback_targets(referral),
                occurred_at=now,
            )
        ],
    )
    # However the answers came (messages, the web page, a sandbox scenario), the assistant
    # has nothing more to ask or remind.
    await conversations.close(conn, referral_id=referral_id, now=now)
    return await match_referral(conn, roster=roster, ring=ring, referral_id=referral_id, now=now)
