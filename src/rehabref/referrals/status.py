"""Referral statuses (Shape V1), and the next action a partner can expect at each."""

from __future__ import annotations

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


def next_action(status: str, route: str | None) -> str:
    if status == "received":
        return "start_assistant" if route == "assistant" else "await_contact"
    return {
        "contact_pending": "await_contact",
        "assistant_started": "complete_assistant",
        "booked": "attend_appointment",
        "attended": "record_payment",
        "paid": "close_referral",
    }.get(status, "none")
