"""Everything held about one person, as JSON (an NDPA access request).

Threat: an export that silently skips a table tells the patient less than we hold. So the
tables are named here, each with the column that ties its rows to the person's referrals
(``PER_REFERRAL``), and ``tests/rights`` checks every table with a ``referral_id`` column is
either here or deliberately left out (``NOT_EXPORTED``, with the reason). Credentials are
never exported (assistant and withdrawal tokens are signed, not stored).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any

from sqlalchemy import Table, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.care.sealing import (
    APPOINTMENT_CHANGE_REASON,
    SESSION_CANCEL_REASON,
    SESSION_NOTES,
    assessment_detail,
)
from rehabref.channels.content import from_json, plain_text
from rehabref.channels.sealing import (
    address_refs,
    opened_inbound,
    opened_message,
    opt_out_refs,
)
from rehabref.clock import as_utc, iso
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.events.sealing import event_data
from rehabref.intake.sealing import opened_state
from rehabref.matching.assignments import REASON as ASSIGNMENT_REASON
from rehabref.referrals.coordinator_notes import CONTACT_TASK_NOTE, TRANSITION_REASON
from rehabref.referrals.partner_metadata import partner_metadata
from rehabref.referrals.rows import ReferralRow
from rehabref.referrals.sealing import SEALED_COLUMNS, open_text
from rehabref.tables.assignments import PhysioAssignment
from rehabref.tables.billing import Payment, PaymentRequest
from rehabref.tables.care import Assessment, CareSession
from rehabref.tables.channels import InboundMessage, MessageOptOut, OutboundMessage
from rehabref.tables.eligibility import CoverageUse, ReferralCoverage
from rehabref.tables.events import Event
from rehabref.tables.intake import AssistantSession, ContactTask, IntakeConversation
from rehabref.tables.partners import Partner
from rehabref.tables.payer_billing import ClaimLine
from rehabref.tables.referrals import Referral, ReferralTransition
from rehabref.tables.scheduling import Appointment, SlotOffer

_partners = table(Partner)
_referrals = table(Referral)
_outbound = table(OutboundMessage)
_inbound = table(InboundMessage)
_opt_outs = table(MessageOptOut)

# Section name -> table; each holds rows of the person's referrals by ``referral_id``.
PER_REFERRAL: dict[str, Table] = {
    "transitions": table(ReferralTransition),
    "contact_tasks": table(ContactTask),
    "assistant_sessions": table(AssistantSession),
    "conversations": table(IntakeConversation),
    "therapy_sessions": table(CareSession),
    "physio_assignments": table(PhysioAssignment),
    "appointments": table(Appointment),
    "slot_offers": table(SlotOffer),
    "assessments": table(Assessment),
    "coverage": table(ReferralCoverage),
    "coverage_uses": table(CoverageUse),
    "events": table(Event),
    # Kept by erasure (amounts, dates, ids: what billing law requires).
    "payment_requests": table(PaymentRequest),
    "payments": table(Payment),
    "claim_lines": table(ClaimLine),
}
# Sealed free-text columns of those sections (section -> {column: purpose}), opened for the
# person: care notes and reasons (care/sealing.py), coordinators' notes (coordinator_notes).
SEALED_TEXT: dict[str, dict[str, str]] = {
    "transitions": {"reason": TRANSITION_REASON},
    "contact_tasks": {"note": CONTACT_TASK_NOTE},
    "therapy_sessions": {"notes_summary": SESSION_NOTES, "cancel_reason": SESSION_CANCEL_REASON},
    "appointments": {"change_reason": APPOINTMENT_CHANGE_REASON},
}
# Tables with a referral_id that the export leaves out, and why.
NOT_EXPORTED = {
    "scheduled_jobs": "internal timers holding identifiers only",
    "outbound_messages": "exported as messages_sent (content as the patient read it)",
    "inbound_messages": "exported as messages_received",
    "commission_statement_lines": "the partner's commission on the referral: the partner's "
    "money, no data about the person beyond the referral id",
    "audit_events": "who read or changed the record: ids only, no patient data; given to the "
    "data protection officer, who answers an access-log request (docs/security.md)",
}
# Internal leases and credentials (a payment link opens a checkout): never exported.
_LEFT_OUT_COLUMNS = frozenset(
    {"authorization_url", "body", "claimed_until", "locked_until", "pay_token", "recipient_ref"}
)


def _value(value: Any) -> Any:
    if isinstance(value, datetime):
        return iso(as_utc(value))
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    return value


def plain_row(row: Mapping[Any, Any]) -> dict[str, Any]:
    """A row as JSON values, without internal columns."""
    return {key: _value(value) for key, value in row.items() if key not in _LEFT_OUT_COLUMNS}


async def _rows(conn: AsyncConnection, source: Table, ids: Sequence[str]) -> list[dict[str, Any]]:
    found = await conn.execute(select(source).where(source.c.referral_id.in_(ids)))
    return [dict(row) for row in found.mappings()]


def _message(row: Mapping[Any, Any]) -> dict[str, Any]:
    try:
        text = plain_text(from_json(row["content"]))
    except (KeyError, TypeError):
        text = None
    return {
        "id": row["id"],
        "referral_id": row["referral_id"],
        "channel": row["channel"],
        "to": row["recipient"],
        "purpose": row["purpose"],
        "state": row["state"],
        "text": text,
        "created_at": _value(row["created_at"]),
        "sent_at": _value(row["sent_at"]),
    }


async def export_person(
    conn: AsyncConnection,
    ring: KeyRing,
    referrals: Sequence[ReferralRow],
    *,
    phone: str | None,
    email: str | None,
    now: datetime,
) -> dict[str, Any]:
    """The export document: each referral with everything tied to it, the messages both
    ways, and the number's messaging consent record."""
    ids = [r.id for r in referrals]
    partner_names = {
        row.id: row.name
        for row in await conn.execute(
            select(_partners.c.id, _partners.c.name).where(
                _partners.c.id.in_({r.partner_id for r in referrals})
            )
        )
    }
    sections = {name: await _rows(conn, source, ids) for name, source in PER_REFERRAL.items()}
    # Under every key of the ring (messages written before a rotation are the person's too).
    addresses = [a for a in (phone, email) if a]
    refs = [ref for a in addresses for ref in address_refs(ring, a)]
    consent_refs = [ref for a in addresses for ref in opt_out_refs(ring, a)]
    sent = await conn.execute(
        select(_outbound)
        .where(or_(_outbound.c.referral_id.in_(ids), _outbound.c.recipient_ref.in_(refs)))
        .order_by(_outbound.c.id)
    )
    received = await conn.execute(
        select(_inbound)
        .where(or_(_inbound.c.referral_id.in_(ids), _inbound.c.sender_ref.in_(refs)))
        .order_by(_inbound.c.id)
    )
    consent = await conn.execute(
        select(_opt_outs).where(_opt_outs.c.recipient_ref.in_(consent_refs))
    )
    documents = []
    found = await conn.execute(
        select(_referrals).where(_referrals.c.id.in_(ids)).order_by(_referrals.c.id)
    )
    for referral in found.mappings():
        item = plain_row(referral)
        for column, purpose in SEALED_COLUMNS.items():
            item[column] = open_text(ring, purpose, referral[column])
        item["partner_metadata"] = partner_metadata(ring, referral["partner_metadata"])
        item["partner_name"] = partner_names.get(referral["partner_id"])
        for name, rows in sections.items():
            item[name] = [plain_row(r) for r in rows if r["referral_id"] == referral["id"]]
        for name, sealed in SEALED_TEXT.items():
            for row in item[name]:
                for column, purpose in sealed.items():
                    row[column] = open_text(ring, purpose, row[column])
        for assessment in item["assessments"]:  # the answers, opened back into JSON
            assessment["detail"] = assessment_detail(ring, assessment["detail"])
        for assignment in item["physio_assignments"]:  # the coordinator's reason, opened
            assignment["reason"] = open_text(ring, ASSIGNMENT_REASON, assignment["reason"])
        for event in item["events"]:  # what the partner was told, opened
            event["data"] = event_data(ring, event["data"])
        for conversation in item["conversations"]:  # the patient's answers, opened
            conversation["state"] = opened_state(ring, conversation["state"])
        documents.append(item)
    return {
        "generated_at": iso(as_utc(now)),
        "person": {"phone": phone, "email": email},
        "referrals": documents,
        "messages_sent": [_message(opened_message(ring, r)) for r in sent.mappings()],
        "messages_received": [
            {
                "id": r["id"],
                "referral_id": r["referral_id"],
                "channel": r["channel"],
                "from": r["sender"],
                "text": r["text"],
                "choice_id": r["choice_id"],
                "received_at": _value(r["received_at"]),
            }
            for r in (opened_inbound(ring, row) for row in received.mappings())
        ],
        "messaging_consent": [plain_row(r) for r in consent.mappings()],
    }


def counts(document: Mapping[str, Any]) -> dict[str, int]:
    """Rows per section of an export: what the request log keeps instead of the data."""
    result = {
        "referrals": len(document["referrals"]),
        "messages_sent": len(document["messages_sent"]),
        "messages_received": len(document["messages_received"]),
    }
    for name in PER_REFERRAL:
        result[name] = sum(len(r[name]) for r in document["referrals"])
    return result
