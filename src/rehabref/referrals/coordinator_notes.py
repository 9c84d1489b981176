"""What coordinators and partners write about a referral's handling, sealed at rest.

Threat: a database copy or backup must not reveal why a referral moved (a coordinator's or a
partner's reason: "patient admitted to hospital", "cannot afford the visits") nor what a
coordinator noted on a call with the patient. Every writer stores
``referral_transitions.reason`` and ``contact_tasks.note`` sealed; every reader opens them
here. Values without the ``s1.`` envelope (rows from before migration 0030) are read as they
are.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from rehabref.crypto import KeyRing, seal_optional
from rehabref.referrals.sealing import open_text

TRANSITION_REASON = "referral_transition.reason"
CONTACT_TASK_NOTE = "contact_task.note"


def sealed_transition_reason(ring: KeyRing, reason: str | None) -> str | None:
    return seal_optional(ring, TRANSITION_REASON, reason)


def stored_transitions(ring: KeyRing, rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``referral_transitions`` rows as they are stored: each reason sealed."""
    return [{**row, "reason": sealed_transition_reason(ring, row["reason"])} for row in rows]


def sealed_task_note(ring: KeyRing, note: str | None) -> str | None:
    return seal_optional(ring, CONTACT_TASK_NOTE, note)


def transition_reason(ring: KeyRing, stored: str | None) -> str | None:
    return open_text(ring, TRANSITION_REASON, stored)


def task_note(ring: KeyRing, stored: str | None) -> str | None:
    return open_text(ring, CONTACT_TASK_NOTE, stored)


def opened_transition(ring: KeyRing, row: Any) -> SimpleNamespace:
    """A ``referral_transitions`` row read by attribute, its reason opened (templates)."""
    return SimpleNamespace(**{**row._mapping, "reason": transition_reason(ring, row.reason)})
