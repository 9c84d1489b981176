"""What happens to a message that will not arrive: the next channel, or a person.

A refused WhatsApp message (not on WhatsApp, window closed, template rejected) or one that
ran out of retries is re-sent as an SMS with the same words and link when SMS is
configured; otherwise, and for SMS and e-mail, the ``Undeliverable`` hook wired at start-up
opens a coordinator task for the referral, in the same transaction.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.channels.content import as_reply, from_json
from rehabref.channels.outbox import OPT_OUT_ACK, enqueue
from rehabref.channels.policy import fallback_channel
from rehabref.channels.providers import ChannelProviders
from rehabref.crypto import KeyRing

# (conn, referral id, the channel that failed, reason, now): a coordinator takes over.
Undeliverable = Callable[[AsyncConnection, str, str, str, datetime], Awaitable[None]]


@dataclass(frozen=True)
class Fallback:
    providers: ChannelProviders
    undeliverable: Undeliverable
    # Seals the fallback message as every message is sealed (channels/sealing.py).
    ring: KeyRing

    async def failed(
        self, conn: AsyncConnection, message: Mapping[Any, Any], reason: str, now: datetime
    ) -> str | None:
        """Route a failed message on (``message`` opened: recipient and content in clear);
        the fallback message's id, if one was written."""
        if message["purpose"] == OPT_OUT_ACK:
            # The STOP itself already reached a coordinator (task ``opted_out``); a carrier
            # that blocks our confirmation (Twilio 21610) has stopped the number too.
            return None
        environment = str(message["environment"])
        following = fallback_channel(
            str(message["channel"]),
            available=lambda channel: self.providers.reachable(environment, channel),
        )
        if following is not None:
            return await enqueue(
                conn,
                self.ring,
                channel=following,
                to=str(message["recipient"]),
                content=as_reply(from_json(message["content"])),
                purpose=str(message["purpose"]),
                environment=environment,
                referral_id=message["referral_id"],
                now=now,
            )
        if message["referral_id"] is not None:
            await self.undeliverable(
                conn, str(message["referral_id"]), str(message["channel"]), reason, now
            )
        return None
