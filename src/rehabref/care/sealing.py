"""Clinical notes of care, sealed at rest.

Threat: a database copy or backup must not reveal what happened in a patient's treatment: the
physiotherapist's session notes, why a session or a visit was cancelled or moved, and the
answers of outcome measures (a PSFS names the activities the patient struggles with). Every
writer stores these sealed (``rehabref.crypto.seal``, one purpose per column); every reader
opens them here. Values without the ``s1.`` envelope (rows from before migration 0030) are
read as they are. Scores, scales, statuses and dates stay plain (reports count them).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from rehabref.crypto import KeyRing, seal, seal_optional
from rehabref.referrals.sealing import open_text

SESSION_NOTES = "care_session.notes_summary"
SESSION_CANCEL_REASON = "care_session.cancel_reason"
ASSESSMENT_DETAIL = "assessment.detail"
APPOINTMENT_CHANGE_REASON = "appointment.change_reason"


def sealed_session_notes(ring: KeyRing, notes: str | None) -> str | None:
    return seal_optional(ring, SESSION_NOTES, notes)


def sealed_cancel_reason(ring: KeyRing, reason: str | None) -> str | None:
    return seal_optional(ring, SESSION_CANCEL_REASON, reason)


def sealed_change_reason(ring: KeyRing, reason: str | None) -> str | None:
    return seal_optional(ring, APPOINTMENT_CHANGE_REASON, reason)


def change_reason(ring: KeyRing, stored: str | None) -> str | None:
    """An appointment's ``change_reason``, opened."""
    return open_text(ring, APPOINTMENT_CHANGE_REASON, stored)


def opened_appointment(ring: KeyRing, row: Any) -> SimpleNamespace:
    """An ``appointments`` row read by attribute, its change reason opened (templates)."""
    return SimpleNamespace(
        **{**row._mapping, "change_reason": change_reason(ring, row.change_reason)}
    )


@dataclass(frozen=True, slots=True)
class SessionNotes:
    notes_summary: str | None
    cancel_reason: str | None


def session_notes(ring: KeyRing, row: Any) -> SessionNotes:
    """A ``care_sessions`` row's notes summary and cancel reason, opened."""
    return SessionNotes(
        notes_summary=open_text(ring, SESSION_NOTES, row.notes_summary),
        cancel_reason=open_text(ring, SESSION_CANCEL_REASON, row.cancel_reason),
    )


def sealed_detail(ring: KeyRing, detail: dict[str, Any]) -> str:
    """An assessment's answers as sealed JSON text."""
    return seal(ring, ASSESSMENT_DETAIL, json.dumps(detail, separators=(",", ":")))


def assessment_detail(ring: KeyRing, stored: str) -> dict[str, Any]:
    """An assessment's answers, opened; a row from before sealing holds plain JSON text."""
    detail: dict[str, Any] = json.loads(open_text(ring, ASSESSMENT_DETAIL, stored) or "{}")
    return detail
