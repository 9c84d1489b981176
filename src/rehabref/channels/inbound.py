"""What providers tell us about patients' messages: an inbound message or a delivery status.

WhatsApp's webhook and Twilio's form callbacks are parsed into these provider-neutral
records, so the conversation and the outbox never see a provider's wire format. Parsers are
pure and total: a garbled or unknown part is skipped, never raised on, because a webhook
answered with an error is re-delivered by the provider for days.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

DeliveryStatus = Literal["queued", "sent", "delivered", "read", "failed"]
DELIVERY_STATUSES: tuple[DeliveryStatus, ...] = ("queued", "sent", "delivered", "read", "failed")


@dataclass(frozen=True)
class InboundMessage:
    """A patient wrote to us. ``choice_id`` is the id of the button or list row they
    picked (None for typed text); ``text`` is what they typed (None for a pick)."""

    provider: str
    provider_message_id: str
    sender: str  # E.164 with "+"
    text: str | None
    choice_id: str | None
    received_at: datetime
    # The provider id of our message this one answers (a tapped button, or a WhatsApp
    # "reply"): which conversation it belongs to when the number has several.
    context_id: str | None = None


@dataclass(frozen=True)
class StatusUpdate:
    """The provider's news about a message we sent (``provider_message_id`` is its id)."""

    provider: str
    provider_message_id: str
    status: DeliveryStatus
    error_code: str | None
    at: datetime
    # Our own message id, when the provider echoes it back (WhatsApp's
    # ``biz_opaque_callback_data``): a status can arrive before its provider id is recorded.
    our_message_id: str | None = None


def storable(text: str | None, limit: int) -> str | None:
    """Text as a database column takes it: no NUL (PostgreSQL refuses it), no lone
    surrogates (no encoding takes them), at most ``limit`` characters."""
    if not text:
        return None
    cleaned = text.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")
    return cleaned[:limit] or None
