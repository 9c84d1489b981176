"""Referral statuses (Shape V1), and the next action a partner can expect at each."""

from __future__ import annotations

from rehabref.referrals.schemas_v1 import NextAction

STATUSES: tuple[str, ...] = (
    "received",
    "contact_pending",
    "assistant_started",
    "booked",
    "attended",
    "paid",
    "closed",
    "cancelled",
)
TERMINAL = frozenset({"closed", "cancelled"})


_NEXT_ACTIONS: dict[str, NextAction] = {
    "contact_pending": "await_contact",
    "assistant_started": "complete_assistant",
    "booked": "attend_appointment",
    "attended": "record_payment",
    "paid": "close_referral",
}


def next_action(status: str, route: str | None) -> NextAction:
    if status == "received":
        return "start_assistant" if route == "assistant" else "await_contact"
    return _NEXT_ACTIONS.get(status, "none")
