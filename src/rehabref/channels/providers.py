"""Which provider carries a message: chosen once at start-up (``wiring.channel_providers``).

Live messages go to the configured provider of their channel (none when its settings are
missing: the message is not planned and a coordinator task is opened instead). Test-key
messages go to a recording provider that sends nothing: a sandbox message is recorded as
sent the moment it is planned, so no sandbox referral ever reaches a real patient.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from rehabref.channels.content import Channel
from rehabref.channels.outcome import Provider


class RecordingProvider(Provider, Protocol):
    """A provider that accepts at once without sending (the sandbox)."""

    def record(self, row: dict[str, Any], now: datetime) -> dict[str, Any]:
        """The planned row as accepted: state ``sent``, this provider, its message id."""
        ...


@dataclass(frozen=True)
class ChannelProviders:
    live: Mapping[str, Provider]
    test: RecordingProvider

    def provider(self, environment: str, channel: str) -> Provider | None:
        if environment != "live":
            return self.test
        return self.live.get(channel)

    def reachable(self, environment: str, channel: str) -> bool:
        return self.provider(environment, channel) is not None

    def planned(self, row: dict[str, Any], now: datetime) -> dict[str, Any]:
        """A message row as a plan writes it: recorded at once when its provider records."""
        if row["environment"] != "live":
            return self.test.record(row, now)
        return row

    def missing(self) -> list[Channel]:
        """Live channels without a configured provider (warned about at start-up)."""
        return [channel for channel in ("whatsapp", "sms", "email") if channel not in self.live]

    async def aclose(self) -> None:
        for provider in self.live.values():
            await provider.aclose()
