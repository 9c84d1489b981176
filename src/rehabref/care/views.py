"""Session representations: the ops view and the partner list item (spec 2.6)."""

from __future__ import annotations

from typing import Any, cast

import msgspec

from rehabref.care.responses import SessionItem
from rehabref.care.rows import CareSessionRow
from rehabref.care.schemas import Modality, SessionStatus
from rehabref.care.sealing import SESSION_NOTES, session_notes
from rehabref.care.sessions import duration_seconds
from rehabref.care.store import SessionListRow
from rehabref.clock import iso
from rehabref.crypto import KeyRing
from rehabref.referrals.sealing import open_text


def ops_session_view(row: CareSessionRow, *, provider_name: str, ring: KeyRing) -> dict[str, Any]:
    seconds = duration_seconds(row)
    notes = session_notes(ring, row)
    location = (
        {"lat": row.location_lat, "lng": row.location_lng} if row.location_lat is not None else None
    )
    return {
        "session_id": row.id,
        "referral_id": row.referral_id,
        "session_number": row.session_number,
        "session_type": row.session_type,
        "status": row.status,
        "modality": row.modality,
        "physio_id": row.physio_id,
        "provider_name": provider_name,
        "scheduled_at": iso(row.scheduled_at),
        "location": location,
        "check_in_at": iso(row.check_in_at),
        "check_out_at": iso(row.check_out_at),
        "completed_at": iso(row.completed_at),
        "duration_minutes": None if seconds is None else round(seconds / 60, 1),
        "pain_score_before": row.pain_before,
        "pain_score_after": row.pain_after,
        "notes_summary": notes.notes_summary,
        "gps_check_in": row.gps_check,
        "invoice_reference": row.invoice_reference,
        "cancel_reason": notes.cancel_reason,
    }


def partner_session_item(
    row: SessionListRow, *, provider_name: str, clinical: bool, ring: KeyRing
) -> SessionItem:
    """Spec 2.6. For ``v1`` partners the clinical fields are left out altogether."""
    item = SessionItem(
        session_id=row.id,
        session_number=row.session_number,
        session_type=row.session_type,
        scheduled_at=iso(row.scheduled_at),
        completed_at=iso(row.completed_at),
        status=cast(SessionStatus, row.status),
        provider_name=provider_name,
        modality=cast(Modality, row.modality),
    )
    if not clinical:
        return item
    return msgspec.structs.replace(
        item,
        pain_score_before=row.pain_before,
        pain_score_after=row.pain_after,
        notes_summary=open_text(ring, SESSION_NOTES, row.notes_summary),
    )
