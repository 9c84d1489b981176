"""Erasing one person (an NDPA erasure request, or retention): scrub, do not delete.

Threat: a deleted referral breaks the partner's records, invoices and the audit trail; a
scrubbed one leaves copies of the patient in side tables. So every row tied to the person
keeps its ids, statuses, dates and amounts (billing and audit law), and every personal or
clinical value is overwritten in place, in one transaction:

- ``referrals``: first name and city become ``[erased]`` (required in the partners'
  response schemas); surname, phone, e-mail, area, reason, diagnosis and the partner's
  metadata become null; ``erased_at`` is set. Consent evidence (accepted, when, version)
  stays.
- transitions' reasons, contact tasks' notes and assignment reasons: null; assistant
  answers: null; the conversation's dialogue state: empty; therapy sessions' notes, pain
  scores, locations and GPS checks: null; assessments (clinical measures only): deleted.
- patient messages both ways (by referral or by the person's address): address and text
  ``[erased]``, unsent ones cancelled.
- partner events of the referrals: clinical keys removed and any value holding one of the
  person's identifiers replaced by ``[erased]``, in ``data`` and in the stored envelope
  (both sealed again);
  receivers' response excerpts: null.
- remembered idempotent replies that mention a referral: deleted.

Kept on purpose: the STOP record (``message_opt_outs``, the number's blind index: honouring
an opt-out needs it), the HMO's member registry (the HMO's data, re-imported from it) and
coverage policy numbers (the HMO bills by them). An open referral is first ended as a
consent withdrawal, so the partner is told before its data goes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import delete, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.channels.content import Reply, to_json
from rehabref.channels.outbox import WAITING
from rehabref.channels.sealing import address_refs
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.events.catalogue import CLINICAL_KEYS
from rehabref.events.outbox import envelope
from rehabref.events.sealing import event_data, sealed_event_row
from rehabref.idempotency.service import stored_body
from rehabref.referrals.rows import ReferralRow
from rehabref.referrals.sealing import clinical_text, patient_identity
from rehabref.tables.assignments import PhysioAssignment
from rehabref.tables.care import Assessment, CareSession
from rehabref.tables.channels import InboundMessage, OutboundMessage
from rehabref.tables.events import Delivery, DeliveryAttempt, Event
from rehabref.tables.idempotency import IdempotencyRecord
from rehabref.tables.intake import AssistantSession, ContactTask, IntakeConversation
from rehabref.tables.referrals import Referral, ReferralTransition
from rehabref.tables.scheduling import Appointment
from rehabref.workflows.consent import withdraw_one

ERASED = "[erased]"
ERASED_REF = "erased"
# Plain JSON text: nothing left to seal (readers take values without the s1. envelope as
# they are).
ERASED_CONTENT = json.dumps(to_json(Reply(ERASED)))
ERASED_STATE = "{}"

_referrals = table(Referral)
_transitions = table(ReferralTransition)
_tasks = table(ContactTask)
_assistant = table(AssistantSession)
_conversations = table(IntakeConversation)
_sessions = table(CareSession)
_assignments = table(PhysioAssignment)
_appointments = table(Appointment)
_assessments = table(Assessment)
_outbound = table(OutboundMessage)
_inbound = table(InboundMessage)
_events = table(Event)
_deliveries = table(Delivery)
_attempts = table(DeliveryAttempt)
_idempotency = table(IdempotencyRecord)

REFERRAL_SCRUB: dict[str, Any] = {
    "patient_first_name": ERASED,
    "patient_last_name": None,
    "patient_phone": None,
    "patient_email": None,
    "patient_phone_index": None,
    "patient_email_index": None,
    "patient_city": ERASED,
    "patient_area": None,
    "reason": None,
    "diagnosis": None,
    "partner_metadata": None,
}
SESSION_SCRUB: dict[str, Any] = {
    "notes_summary": None,
    "cancel_reason": None,
    "pain_before": None,
    "pain_after": None,
    "location_lat": None,
    "location_lng": None,
    "check_in_lat": None,
    "check_in_lng": None,
    "check_out_lat": None,
    "check_out_lng": None,
    "gps_check": None,
}


def identifiers_of(
    ring: KeyRing, referrals: Sequence[ReferralRow], extra: Sequence[str | None]
) -> set[str]:
    """The person's values worth finding in free-form data (names of 3+ characters)."""
    found: set[str] = {v for v in extra if v}
    for r in referrals:
        clinical = clinical_text(ring, r)
        person = patient_identity(ring, r)
        for value in (
            person.first_name,
            person.last_name,
            person.phone,
            person.email,
            clinical.reason,
            clinical.diagnosis,
        ):
            if value and len(value) >= 3 and value != ERASED:
                found.add(value)
    return found


def scrub_value(value: Any, identifiers: set[str]) -> Any:
    """``value`` without clinical keys and with every string that holds one of the
    person's identifiers replaced (pure; any JSON value)."""
    if isinstance(value, dict):
        return {k: scrub_value(v, identifiers) for k, v in value.items() if k not in CLINICAL_KEYS}
    if isinstance(value, list):
        return [scrub_value(item, identifiers) for item in value]
    if isinstance(value, str):
        lowered = value.lower()
        if any(identifier.lower() in lowered for identifier in identifiers):
            return ERASED
    return value


async def _count(conn: AsyncConnection, statement: Any) -> int:
    return int((await conn.execute(statement)).rowcount or 0)


async def _scrub_events(
    conn: AsyncConnection, ring: KeyRing, ids: list[str], identifiers: set[str]
) -> int:
    rows = (
        await conn.execute(
            select(_events.c.id, _events.c.type, _events.c.occurred_at, _events.c.data).where(
                _events.c.referral_id.in_(ids)
            )
        )
    ).all()
    for row in rows:
        data = scrub_value(event_data(ring, row.data), identifiers)
        body = envelope(
            event_id=row.id, event_type=row.type, occurred_at=row.occurred_at, data=data
        )
        # Sealed again: what remains of the event is still the partner's record of a patient.
        scrubbed = sealed_event_row(ring, {"data": data, "body": body})
        await conn.execute(update(_events).where(_events.c.id == row.id).values(scrubbed))
    deliveries = select(_deliveries.c.id).where(
        _deliveries.c.event_id.in_([row.id for row in rows])
    )
    await conn.execute(
        update(_attempts)
        .where(_attempts.c.delivery_id.in_(deliveries))
        .values(response_excerpt=None, error=None)
    )
    return len(rows)


async def _forget_replies(
    conn: AsyncConnection, ring: KeyRing, referrals: Sequence[ReferralRow]
) -> int:
    """Remembered replies of the partners' requests that mention one of the referrals
    (at most a day's worth per partner: they expire after 24 h). They are sealed, so each is
    opened to look: a replay must not hand the erased patient's data back."""
    removed = 0
    for partner_id in {r.partner_id for r in referrals}:
        records = await conn.execute(
            select(
                _idempotency.c.environment, _idempotency.c.key, _idempotency.c.response_body
            ).where(_idempotency.c.partner_id == partner_id)
        )
        for record in records.all():
            body = stored_body(ring, bytes(record.response_body))
            if any(r.id.encode() in body for r in referrals if r.partner_id == partner_id):
                removed += await _count(
                    conn,
                    delete(_idempotency).where(
                        _idempotency.c.partner_id == partner_id,
                        _idempotency.c.environment == record.environment,
                        _idempotency.c.key == record.key,
                    ),
                )
    return removed


async def erase_referrals(
    conn: AsyncConnection,
    referrals: Sequence[ReferralRow],
    *,
    ring: KeyRing,
    actor: str,
    now: datetime,
    phone: str | None = None,
    email: str | None = None,
    whole_person: bool = True,
) -> dict[str, int]:
    """Scrub the referrals and everything tied to them; rows touched per table.

    ``whole_person`` (an erasure request): open referrals are first ended as a consent
    withdrawal, and the messages to and from the person's phone and e-mail that no referral
    claims are scrubbed too. Retention passes False: its referrals ended long ago, and
    another referral of the same person may still be open, its messages not due."""
    ids = [r.id for r in referrals]
    identifiers = identifiers_of(ring, referrals, [phone, email])
    addresses = {a for a in identifiers if a.startswith("+") or "@" in a}
    # Under every key of the ring: messages written before a rotation are the person's too.
    refs = list({ref for a in addresses for ref in address_refs(ring, a)}) if whole_person else []
    ended = 0
    for referral in referrals if whole_person else ():
        done = await withdraw_one(
            conn, referral.id, ring=ring, actor=actor, channel="erasure", note=None, now=now
        )
        ended += int(done is not None and done[1])
    result = {"ended": ended}
    result["referrals"] = await _count(
        conn,
        update(_referrals)
        .where(_referrals.c.id.in_(ids))
        .values(**REFERRAL_SCRUB, erased_at=now, updated_at=now),
    )
    result["transitions"] = await _count(
        conn, update(_transitions).where(_transitions.c.referral_id.in_(ids)).values(reason=None)
    )
    result["contact_tasks"] = await _count(
        conn, update(_tasks).where(_tasks.c.referral_id.in_(ids)).values(note=None)
    )
    result["physio_assignments"] = await _count(
        conn,
        update(_assignments).where(_assignments.c.referral_id.in_(ids)).values(reason=None),
    )
    result["assistant_sessions"] = await _count(
        conn,
        update(_assistant)
        .where(_assistant.c.referral_id.in_(ids))
        .values(availability=None, area=None),
    )
    result["conversations"] = await _count(
        conn,
        update(_conversations)
        .where(_conversations.c.referral_id.in_(ids))
        .values(state=ERASED_STATE, recipient_ref=ERASED_REF, closed_at=now, nudge_at=None),
    )
    result["therapy_sessions"] = await _count(
        conn, update(_sessions).where(_sessions.c.referral_id.in_(ids)).values(**SESSION_SCRUB)
    )
    # Why a visit was moved or cancelled can say something about the person.
    await conn.execute(
        update(_appointments).where(_appointments.c.referral_id.in_(ids)).values(change_reason=None)
    )
    result["assessments"] = await _count(
        conn, delete(_assessments).where(_assessments.c.referral_id.in_(ids))
    )
    mine = or_(_outbound.c.referral_id.in_(ids), _outbound.c.recipient_ref.in_(refs))
    await conn.execute(
        update(_outbound)
        .where(mine, _outbound.c.state.in_(WAITING))
        .values(state="cancelled", last_error="erased", updated_at=now)
    )
    result["messages_sent"] = await _count(
        conn,
        update(_outbound)
        .where(mine)
        .values(
            recipient=ERASED,
            recipient_ref=ERASED_REF,
            content=ERASED_CONTENT,
            updated_at=now,
        ),
    )
    result["messages_received"] = await _count(
        conn,
        update(_inbound)
        .where(or_(_inbound.c.referral_id.in_(ids), _inbound.c.sender_ref.in_(refs)))
        .values(sender=ERASED, sender_ref=ERASED_REF, text=None, choice_id=None),
    )
    result["events"] = await _scrub_events(conn, ring, ids, identifiers)
    if whole_person:  # retention's referrals ended long after their replies expired (24 h)
        result["idempotent_replies"] = await _forget_replies(conn, ring, referrals)
    return result
