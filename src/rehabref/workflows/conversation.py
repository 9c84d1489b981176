"""The assistant conversation, end to end: a patient's message in, the dialogue's turn, the
replies out, and what the turn means for the referral.

- ``handle_inbound`` (the ``channels.inbound`` job, run by the worker after the provider's
  webhook was acknowledged): STOP (consent withdrawal, ``workflows.consent``) / START
  first, then the dialogue of the sender's open conversation. The first answer moves the
  referral to ``assistant_started``; a confirmed summary completes the intake
  (``patient.intake_completed``, then matching); a request for a person, three
  misunderstood answers or a refused consent open a coordinator task.
- ``nudge_silent`` (a periodic job): 24 h of silence sends one reminder, 72 h hands the
  referral to a coordinator.
- ``message_undeliverable`` (the channels' ``Undeliverable`` hook): a patient we cannot reach
  by message gets a coordinator task.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.care import slot_offers as offers_store
from rehabref.channels import opt_outs
from rehabref.channels.content import Channel, Reply
from rehabref.channels.inbox import mark_processed, unprocessed
from rehabref.channels.outbox import OPT_OUT_ACK, enqueue, referral_of_message
from rehabref.channels.sealing import address_ref, address_refs
from rehabref.clock import utcnow
from rehabref.crypto import KeyRing
from rehabref.db import Database
from rehabref.eligibility.adapters import CoverageSources
from rehabref.errors import ApiError
from rehabref.intake import conversation_store as conversations
from rehabref.intake import dialogue
from rehabref.matching.roster import RosterSources
from rehabref.referrals.rows import ReferralRow
from rehabref.referrals.sealing import patient_identity
from rehabref.referrals.tasks import open_task_once
from rehabref.referrals.transitions import lock_referral
from rehabref.workflows import slot_offers
from rehabref.workflows.consent import withdraw_number
from rehabref.workflows.first_contact import context_of, patient_address
from rehabref.workflows.intake import intake_completed, patient_engaged
from rehabref.workflows.moves import ENDED

REMIND_AFTER = dialogue.REMINDER_AFTER
HAND_OVER_AFTER = timedelta(hours=72)
NUDGES_PER_ROUND = 50

# What a finished turn asks of a coordinator (contact task purpose).
TASK_FOR_OUTCOME = {"handover": "assistant_handover", "declined": "consent_declined"}

OPTED_OUT = Reply(
    "You have withdrawn your consent: rehabref has stopped your referral, told your referrer "
    "and will send you no more messages. Reply START to get messages again (your referral "
    "stays stopped; ask your referrer for a new one)."
)
OPTED_IN = Reply("You will get messages from rehabref again.")


async def apply_turn(
    conn: AsyncConnection,
    *,
    roster: RosterSources,
    ring: KeyRing,
    referral: ReferralRow,
    conversation: Mapping[Any, Any],
    turn: dialogue.Turn,
    actor: str,
    now: datetime,
) -> str | None:
    """What a dialogue turn means for the referral (the replies are the caller's to send);
    the physiotherapist a completed intake was matched to, if any."""
    matched: str | None = None
    if conversation["engaged_at"] is None:
        await patient_engaged(conn, referral_id=referral.id, actor=actor, ring=ring, now=now)
    if turn.outcome == "completed":
        state = turn.state
        try:
            matched = await intake_completed(
                conn,
                roster=roster,
                ring=ring,
                referral_id=referral.id,
                availability=",".join(state.availability),
                care_mode=state.care_mode or "",
                area=state.area,
                actor=actor,
                now=max(utcnow(), now),
            )
        except ApiError as exc:
            if exc.status != 409:  # completed already, e.g. on the web page
                raise
    elif turn.outcome in TASK_FOR_OUTCOME:
        await open_task_once(
            conn, referral=referral, purpose=TASK_FOR_OUTCOME[turn.outcome], now=now
        )
    await conversations.save_turn(
        conn,
        ring,
        referral_id=referral.id,
        state=turn.state.to_json(),
        engaged=conversation["engaged_at"] is None,
        closed=turn.state.step in dialogue.TERMINAL,
        nudge_at=now + REMIND_AFTER,
        now=now,
    )
    return matched


async def _reply(
    conn: AsyncConnection,
    ring: KeyRing,
    *,
    channel: str,
    to: str,
    reply: Reply,
    purpose: str,
    referral_id: str | None,
    now: datetime,
) -> None:
    sending: Channel = "sms" if channel == "sms" else "whatsapp"
    await enqueue(
        conn,
        ring,
        channel=sending,
        to=to,
        content=reply,
        purpose=purpose,
        environment="live",
        referral_id=referral_id,
        now=now,
    )


async def _keyword(
    conn: AsyncConnection, ring: KeyRing, *, word: str, inbound: Mapping[Any, Any], now: datetime
) -> str | None:
    """STOP (consent withdrawal) / START for the sender's number; the referral it concerned,
    if any."""
    channel, sender = inbound["channel"], inbound["sender"]
    # The number's latest referral, locked before the messages (the order every writer
    # keeps: referral, then its messages).
    latest = await conversations.for_recipient(
        conn, ring, address_refs(ring, sender), open_only=False
    )
    referral = await lock_referral(conn, latest["referral_id"]) if latest is not None else None
    referral_id = referral.id if referral is not None else None
    if word == "stop":
        first = await opt_outs.opt_out(conn, ring, address=sender, channel=channel, now=now)
        # STOP is consent withdrawal (docs/security.md): every live referral of the number
        # ends and its partner is told; a repeated STOP finds nothing left to end. Ended
        # before the acknowledgement is written, which ending would otherwise cancel.
        await withdraw_number(conn, ring, sender, channel=channel, now=now)
        if first:
            await _reply(
                conn,
                ring,
                channel=channel,
                to=sender,
                reply=OPTED_OUT,
                purpose=OPT_OUT_ACK,
                referral_id=referral_id,
                now=now,
            )
    elif await opt_outs.opt_in(conn, ring, address=sender, channel=channel, now=now):
        await _reply(
            conn,
            ring,
            channel=channel,
            to=sender,
            reply=OPTED_IN,
            purpose="optout.start",
            referral_id=referral_id,
            now=now,
        )
    return referral_id


async def _conversation_of(
    conn: AsyncConnection, ring: KeyRing, inbound: Mapping[Any, Any]
) -> Mapping[Any, Any] | None:
    """The open conversation a message belongs to: the one of our message it answers (a
    tapped button, or a WhatsApp reply, says which), else the newest with that number (a
    shared family phone with two open referrals is told apart by the former)."""
    # The sender's index under every key: a conversation begun before a key rotation.
    refs = address_refs(ring, inbound["sender"])
    if inbound["context_id"]:
        referral_id = await referral_of_message(conn, inbound["context_id"])
        if referral_id is not None:
            found = await conversations.for_referral(conn, ring, referral_id, lock=False)
            if found is not None and found["closed_at"] is None and found["recipient_ref"] in refs:
                return found
    return await conversations.for_recipient(conn, ring, refs, open_only=True)


async def handle_inbound(
    conn: AsyncConnection,
    payload: dict[str, Any],
    now: datetime,
    *,
    roster: RosterSources,
    ring: KeyRing,
    coverage: CoverageSources,
) -> None:
    """A patient's message, once: the job the inbound webhook scheduled for it."""
    inbound = await unprocessed(conn, ring, str(payload["inbound_id"]))
    if inbound is None:
        return
    typed = inbound["choice_id"] is None
    word = opt_outs.keyword(inbound["text"], channel=inbound["channel"]) if typed else None
    if word is not None:
        referral_id = await _keyword(conn, ring, word=word, inbound=inbound, now=now)
        await mark_processed(conn, inbound_id=inbound["id"], referral_id=referral_id, now=now)
        return
    found = await _conversation_of(conn, ring, inbound)
    if found is None:
        await _after_intake(conn, inbound, now, coverage=coverage, ring=ring)
        return
    referral = await lock_referral(conn, found["referral_id"])
    if referral is None:
        await mark_processed(conn, inbound_id=inbound["id"], referral_id=None, now=now)
        return
    conversation = await conversations.for_referral(conn, ring, referral.id) or found
    if referral.status in ENDED:
        await conversations.close(conn, referral_id=referral.id, now=now)
    else:
        context = await context_of(conn, ring, referral)
        choice = inbound["choice_id"]
        turn = dialogue.step(
            dialogue.State.from_json(conversation["state"]),
            context,
            dialogue.Answer(text=inbound["text"], choice_ids=(choice,) if choice else ()),
        )
        matched = await apply_turn(
            conn,
            roster=roster,
            ring=ring,
            referral=referral,
            conversation=conversation,
            turn=turn,
            actor=f"patient:{inbound['channel']}",
            now=now,
        )
        replies, purpose = turn.replies, "intake.reply"
        if turn.outcome == "completed" and matched is not None:
            # Instead of "your care team will contact you": three times to choose from.
            offer = await slot_offers.offer_after_intake(
                conn,
                referral=referral,
                physio_id=matched,
                state=turn.state,
                channel=inbound["channel"],
                ring=ring,
                now=now,
            )
            replies, purpose = (offer,), slot_offers.OFFER_PURPOSE
        for reply in replies:
            await _reply(
                conn,
                ring,
                channel=inbound["channel"],
                to=inbound["sender"],
                reply=reply,
                purpose=purpose,
                referral_id=referral.id,
                now=now,
            )
    await mark_processed(conn, inbound_id=inbound["id"], referral_id=referral.id, now=now)


async def _after_intake(
    conn: AsyncConnection,
    inbound: Mapping[Any, Any],
    now: datetime,
    *,
    coverage: CoverageSources,
    ring: KeyRing,
) -> None:
    """A message from a patient whose intake is over: the answer to the slots offered to
    them, or (e.g. HELP to change a booked visit) a message a coordinator reads on the
    referral's timeline. From an unknown number: kept, no more."""
    latest = await conversations.for_recipient(
        conn, ring, address_refs(ring, inbound["sender"]), open_only=False
    )
    referral = await lock_referral(conn, latest["referral_id"]) if latest is not None else None
    offer = None
    if referral is not None and referral.status not in ENDED:
        offer = await offers_store.open_for_referral(conn, referral.id)
    if referral is not None and offer is not None and latest is not None:
        state = dialogue.State.from_json(latest["state"])
        reply = await slot_offers.answer_offer(
            conn,
            referral=referral,
            offer=offer,
            inbound=inbound,
            availability=state.availability,
            now=now,
            coverage=coverage,
            ring=ring,
        )
        if reply is not None:
            await _reply(
                conn,
                ring,
                channel=inbound["channel"],
                to=inbound["sender"],
                reply=reply,
                purpose=slot_offers.OFFER_PURPOSE,
                referral_id=referral.id,
                now=now,
            )
    elif referral is not None and referral.status not in ENDED:
        await open_task_once(conn, referral=referral, purpose="patient_message", now=now)
    referral_id = referral.id if referral is not None else None
    await mark_processed(conn, inbound_id=inbound["id"], referral_id=referral_id, now=now)


async def nudge_silent(db: Database, *, ring: KeyRing, now: datetime | None = None) -> int:
    """Remind once after 24 h of silence; hand over after 72 h. How many were nudged."""
    now = now or utcnow()
    async with db.write() as conn:
        due = await conversations.due_for_nudge(conn, now=now, limit=NUDGES_PER_ROUND)
        for referral_id in due:
            # The referral first, then its conversation: the order every writer keeps.
            referral = await lock_referral(conn, referral_id)
            conversation = await conversations.for_referral(conn, ring, referral_id)
            if conversation is None or conversation["closed_at"] is not None:
                continue  # answered or closed meanwhile
            if referral is None or referral.status in ENDED:
                await conversations.close(conn, referral_id=referral_id, now=now)
                continue
            if conversation["reminded_at"] is None:
                await _remind(conn, ring, referral, conversation, now)
                await conversations.nudged(
                    conn,
                    referral_id=referral.id,
                    next_nudge=now + (HAND_OVER_AFTER - REMIND_AFTER),
                    now=now,
                )
            else:
                await open_task_once(conn, referral=referral, purpose="no_response", now=now)
                await conversations.nudged(conn, referral_id=referral.id, next_nudge=None, now=now)
    return len(due)


async def _remind(
    conn: AsyncConnection,
    ring: KeyRing,
    referral: ReferralRow,
    conversation: Mapping[Any, Any],
    now: datetime,
) -> None:
    reached = patient_address(ring, referral, conversation["channel"])
    if reached is None:
        return
    channel, to = reached
    state = dialogue.State.from_json(conversation["state"])
    # Outside WhatsApp's 24-hour window only an approved template may be sent.
    reminder = dialogue.reminder(await context_of(conn, ring, referral), state)
    await enqueue(
        conn,
        ring,
        channel=channel,
        to=to,
        content=reminder,
        purpose="intake.reminder",
        environment=conversation["environment"],
        referral_id=referral.id,
        now=now,
    )


async def message_undeliverable(
    conn: AsyncConnection, referral_id: str, channel: str, reason: str, now: datetime
) -> None:
    """No message reaches this patient: a coordinator calls."""
    referral = await lock_referral(conn, referral_id)
    if referral is None or referral.status in ENDED:
        return
    await open_task_once(conn, referral=referral, purpose="message_undeliverable", now=now)


async def web_state(
    conn: AsyncConnection, *, ring: KeyRing, referral: ReferralRow
) -> tuple[dialogue.State, dialogue.Context]:
    """Where the web page's patient stands (a fresh start when no conversation exists); reads
    only: showing the page changes nothing, since link previews fetch it too."""
    context = await context_of(conn, ring, referral)
    found = await conversations.for_referral(conn, ring, referral.id, lock=False)
    state = dialogue.State.from_json(found["state"]) if found else dialogue.start(context)
    return state, context


async def web_answer(
    conn: AsyncConnection,
    *,
    roster: RosterSources,
    ring: KeyRing,
    referral_id: str,
    answer: dialogue.Answer,
    actor: str,
    now: datetime,
) -> dialogue.Turn:
    """An answer sent from the assistant web page: the same dialogue as the messaging
    channels, its replies shown on the page instead of sent."""
    referral = await lock_referral(conn, referral_id)
    if referral is None or referral.status in ENDED:
        raise ApiError(409, "invalid_transition", "This referral is no longer open.")
    context = await context_of(conn, ring, referral)
    conversation: Mapping[Any, Any] | None = await conversations.for_referral(
        conn, ring, referral_id
    )
    if conversation is None:
        person = patient_identity(ring, referral)
        contact = person.phone or person.email or referral_id
        begun = dialogue.start(context).to_json()
        await conversations.start(
            conn,
            ring,
            referral_id=referral_id,
            environment=referral.environment,
            channel="web",
            recipient_ref=address_ref(ring, contact),
            state=begun,
            now=now,
        )
        conversation = {"state": begun, "engaged_at": None}
    turn = dialogue.step(dialogue.State.from_json(conversation["state"]), context, answer)
    await apply_turn(
        conn,
        roster=roster,
        ring=ring,
        referral=referral,
        conversation=conversation,
        turn=turn,
        actor=actor,
        now=now,
    )
    return turn
