"""What a provider said to one send, and the one interface every provider client has.

The worker decides from the outcome alone: ``Accepted`` records the provider's message id,
``Retry`` backs off (5xx, 429, network errors, a provider's own rate limit), ``Refused`` never
retries and falls back (a number not on WhatsApp -> SMS with the link -> a coordinator task).
``reason`` is safe to log and to show a coordinator: a provider error code and a few words,
never the recipient, the text or a credential.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from rehabref.channels.content import Channel, Content


@dataclass(frozen=True)
class Accepted:
    provider_message_id: str


@dataclass(frozen=True)
class Retry:
    reason: str
    # Seconds the provider asked us to wait (Retry-After), when it said.
    retry_after: float | None = None


@dataclass(frozen=True)
class Refused:
    reason: str


Outcome = Accepted | Retry | Refused


class Provider(Protocol):
    """One channel's client. ``send`` never raises for a provider's or the network's
    failure: it answers ``Retry`` or ``Refused``."""

    channel: Channel
    name: str

    async def send(self, *, to: str, content: Content, message_id: str) -> Outcome:
        """Send ``content`` to ``to`` (E.164 phone, or e-mail address). ``message_id`` is our
        id for the message (used as a status-callback correlation where the API allows)."""
        ...

    async def aclose(self) -> None: ...
