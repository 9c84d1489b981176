"""The event types partners can receive (spec section 6.1), their documented ``data`` fields,
and the data boundary (no clinical content for ``v1``-contract partners).

Payload version 1: fields are only ever added within a version; removing or changing the
meaning of a field would be a new version, announced in docs/webhooks.md.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

DATA_VERSION = 1

EventType = Literal[
    "referral.created",
    "contact.requested",
    "assistant.started",
    "appointment.booked",
    "appointment.attended",
    "payment.completed",
    "payment.refunded",
    "referral.closed",
    "patient.intake_completed",
    "provider.matched",
    "session.completed",
    "sandbox.scenario_failed",
    "commission.settled",
]
EVENT_TYPES: tuple[str, ...] = get_args(EventType)

DESCRIPTIONS: dict[str, str] = {
    "referral.created": "a referral is accepted",
    "contact.requested": "a preferred-channel outreach (human follow-up) task is created",
    "assistant.started": "the patient starts the assistant flow",
    "appointment.booked": "an appointment is confirmed (also sent again on a reschedule)",
    "appointment.attended": "the appointment is marked attended",
    "payment.completed": "a qualifying payment completes",
    "payment.refunded": "a card payment of the referral was refunded (in part or whole)",
    "referral.closed": "the referral is closed or cancelled (see `status`)",
    "patient.intake_completed": "the patient's intake completes",
    "provider.matched": "a physiotherapist is matched",
    "session.completed": "a treatment session is completed",
    "sandbox.scenario_failed": "a step of a sandbox test-phone scenario could not run (test keys)",
    "commission.settled": "a monthly commission statement was settled (paid out to the partner)",
}

# Keys that carry clinical content. They are removed, at any depth, from every event written
# for a partner on the ``v1`` contract before the event is stored or sent.
CLINICAL_KEYS: frozenset[str] = frozenset(
    {
        "diagnosis",
        "clinical_notes",
        "clinical_summary",
        "notes_summary",
        "pain_score_before",
        "pain_score_after",
        "pain_reduction",
        "pain_reduction_percentage",
        "clinical_report",
        "clinical_report_url",
        "clinical_conclusion",
        "assessment",
        "treatment_plan",
        "metrics",
        "conversation",
    }
)


def within_boundary(data: dict[str, Any], *, contract: str) -> dict[str, Any]:
    """The ``data`` a partner on ``contract`` may receive: clinical keys dropped for ``v1``."""
    if contract == "g":
        return data
    stripped: dict[str, Any] = _strip(data)
    return stripped


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in CLINICAL_KEYS}
    if isinstance(value, list):
        return [_strip(item) for item in value]
    return value
