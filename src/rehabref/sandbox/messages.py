"""The sandbox's patient-message provider: records what would have been sent, sends nothing.

A test key's message is written already accepted (state ``sent``, provider ``sandbox``), with
its full content, so a developer sees in the log exactly what a patient would have received
and no sandbox referral can reach a real phone. With ``REHABREF_MESSAGING=console`` it also
prints one line per message with ids only (never the recipient, the text or the link).
"""

from __future__ import annotations

import sys
from datetime import datetime
from typing import Any

from rehabref.channels.content import Channel, Content
from rehabref.channels.outcome import Accepted, Outcome


class SandboxChannel:
    channel: Channel = "whatsapp"  # any: it stands in for every channel
    name = "sandbox"

    def __init__(self, *, announce: bool = False) -> None:
        self._announce = announce

    def record(self, row: dict[str, Any], now: datetime) -> dict[str, Any]:
        self._print(row["id"], row["channel"], row["purpose"], row["referral_id"])
        return {
            **row,
            "state": "sent",
            "provider": self.name,
            "provider_message_id": None,  # no provider knows it
            "sent_at": now,
            "status_at": now,
        }

    async def send(self, *, to: str, content: Content, message_id: str) -> Outcome:
        self._print(message_id, "-", "-", None)
        return Accepted(f"sandbox-{message_id}")

    async def aclose(self) -> None:
        return None

    def _print(self, message_id: str, channel: str, purpose: str, referral_id: str | None) -> None:
        if self._announce:
            print(
                f"messaging[sandbox] {message_id} channel={channel} purpose={purpose} "
                f"referral={referral_id}",
                file=sys.stdout,
                flush=True,
            )
