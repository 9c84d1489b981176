"""How the delivery worker sends one claimed delivery: a ``DeliveryTransport``.

The worker claims, signs with the partner's active secrets and records; the transport only
sends and reports what happened as the attempts to log and the result that decides the
delivery's state. ``HttpTransport`` is the real sender (one signed POST). The transport is
chosen at start-up (``wiring.delivery_transport``), per environment with ``ByEnvironment``,
so test-only behaviour (the sandbox's phone-5 copies) is a transport of the sandbox's own,
never a branch in the worker or a column in the deliveries table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from rehabref.events.sender import TOTAL_SECONDS, AttemptResult, ClientLanes, post
from rehabref.events.signing import delivery_headers

Clock = Callable[[], datetime]


@dataclass(frozen=True)
class Outgoing:
    """One claimed delivery, ready to sign and send."""

    delivery_id: str
    event_id: str
    referral_id: str | None
    partner_id: str
    environment: str
    target_url: str
    body: bytes
    # The partner's active signing secrets (several during a rotation).
    secrets: Sequence[str]

    def headers(self, timestamp: int) -> dict[str, str]:
        """The webhook headers with a signature over ``timestamp`` and the body."""
        return delivery_headers(
            event_id=self.event_id, secrets=self.secrets, timestamp=timestamp, body=self.body
        )


@dataclass(frozen=True)
class LoggedAttempt:
    """One line of the delivery log."""

    attempted_at: datetime
    result: AttemptResult
    # What the attempt was when it was not an ordinary send; None otherwise.
    note: str | None = None


@dataclass(frozen=True)
class Sent:
    """What one send produced: the attempts to log, in order, and the result that decides
    the delivery (2xx: delivered; otherwise retried with backoff)."""

    attempts: tuple[LoggedAttempt, ...]
    outcome: AttemptResult

    @classmethod
    def single(cls, attempted_at: datetime, result: AttemptResult) -> Sent:
        return cls((LoggedAttempt(attempted_at, result),), result)


class DeliveryTransport(Protocol):
    @property
    def max_seconds(self) -> float:
        """The longest one ``send`` may take; the worker's lease on a delivery covers it."""
        ...

    async def send(self, item: Outgoing, *, clock: Clock) -> Sent:
        """Send the delivery, signed for ``clock()`` at the moment of sending."""
        ...

    async def aclose(self) -> None: ...


class HttpTransport:
    """The real sender: one POST signed for the time it is sent (pooled, guarded clients)."""

    max_seconds = TOTAL_SECONDS

    def __init__(self, lanes: ClientLanes) -> None:
        self._lanes = lanes

    @classmethod
    def create(cls, *, allow_loopback: bool, concurrency: int) -> HttpTransport:
        return cls(ClientLanes.create(allow_loopback=allow_loopback, concurrency=concurrency))

    async def send(self, item: Outgoing, *, clock: Clock) -> Sent:
        attempted_at = clock()
        headers = item.headers(int(attempted_at.timestamp()))
        async with self._lanes.lease() as client:
            result = await post(client, item.target_url, item.body, headers)
        return Sent.single(attempted_at, result)

    async def aclose(self) -> None:
        await self._lanes.aclose()


@dataclass(frozen=True)
class ByEnvironment:
    """Live deliveries through ``live``, sandbox deliveries through ``test`` (chosen at
    start-up), so nothing the sandbox does can touch a live delivery."""

    live: DeliveryTransport
    test: DeliveryTransport

    @property
    def max_seconds(self) -> float:
        return max(self.live.max_seconds, self.test.max_seconds)

    async def send(self, item: Outgoing, *, clock: Clock) -> Sent:
        chosen = self.test if item.environment == "test" else self.live
        return await chosen.send(item, clock=clock)

    async def aclose(self) -> None:
        await self.live.aclose()
        if self.test is not self.live:
            await self.test.aclose()
