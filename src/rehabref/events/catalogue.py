"""The event types partners can receive (spec section 6.1)."""

from __future__ import annotations

EVENT_TYPES: tuple[str, ...] = (
    "referral.created",
    "contact.requested",
    "assistant.started",
    "appointment.booked",
    "appointment.attended",
    "payment.completed",
    "referral.closed",
    "patient.intake_completed",
    "provider.matched",
    "session.completed",
)
