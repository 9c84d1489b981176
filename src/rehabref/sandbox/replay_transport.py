"""Sandbox test phone 5 (spec 6.5, "replay attack / webhook failure") as a delivery transport.

What it lets a partner test: a receiver must process each event once although the same
``event_id`` arrives again (deliveries are at least once), and must refuse a captured request
replayed later, whose signature is valid but whose ``X-Service-Timestamp`` is old.

A sandbox delivery of an event whose referral's patient phone is test phone 5 is sent as
three real copies to the partner's URL, through the wrapped (real) transport, all logged:

1. the event, signed for now;
2. a simulated HTTP 500 is logged for it (nothing is sent: the webhook "failed"), then the
   same body again, signed afresh for now (the retry: same ``event_id``, new signature);
3. the same body signed for a timestamp ``STALE_BY`` in the past: a valid signature over an
   old timestamp, which a correct receiver refuses (4xx).

The delivery is delivered when copy 1 or copy 2 got a 2xx, and retried as a whole (all
copies again) otherwise; copy 3 never decides it. A 2xx to copy 3 is logged with the error
"your receiver accepted a stale replay". The three copies share the time one ordinary send
may take (``max_seconds`` of the wrapped transport), so the worker's lease needs no more
time for them; a copy left without time is logged as a timeout. Every other delivery goes
through the wrapped transport unchanged; live deliveries never reach this transport
(``wiring``).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta

from sqlalchemy import select

from rehabref.crypto import KeyRing
from rehabref.db import Database, table
from rehabref.events.sender import AttemptResult
from rehabref.events.transport import Clock, DeliveryTransport, LoggedAttempt, Outgoing, Sent
from rehabref.expiring_cache import ExpiringCache
from rehabref.referrals.sealing import PHONE, open_text
from rehabref.sandbox.phones import scenario_for
from rehabref.tables.referrals import Referral

_referrals = table(Referral)

REPLAY_SCENARIO = 5
# A receiver's tolerance is five minutes (docs/webhooks.md); one second more is stale.
STALE_BY = timedelta(minutes=5, seconds=1)
NOTE_FIRST = "sandbox phone 5, copy 1 of 3: the event"
NOTE_SIMULATED = "sandbox phone 5: simulated HTTP 500, nothing sent; copy 2 is the retry"
NOTE_RETRY = (
    "sandbox phone 5, copy 2 of 3: retry after the simulated 500 "
    "(same event_id, fresh signature): answer 2xx, process it once"
)
NOTE_STALE = (
    "sandbox phone 5, copy 3 of 3: stale replay "
    "(valid signature, timestamp 301 s old): a correct receiver refuses it"
)
SIMULATED_ERROR = "simulated HTTP 500 (sandbox phone 5)"
OUT_OF_TIME = "timeout: no answer within the time the three copies share"
STALE_ACCEPTED = "your receiver accepted a stale replay: refuse timestamps over 5 minutes old"


class PhoneFiveReplay:
    """Sends phone-5 deliveries as the three copies above; anything else unchanged."""

    def __init__(self, db: Database, inner: DeliveryTransport, ring: KeyRing) -> None:
        self._db = db
        self._ring = ring
        self._inner = inner
        # A referral's patient phone never changes: one lookup per referral.
        self._replays: ExpiringCache[str, bool] = ExpiringCache(ttl_seconds=3600)

    @property
    def max_seconds(self) -> float:
        return self._inner.max_seconds

    async def send(self, item: Outgoing, *, clock: Clock) -> Sent:
        if item.referral_id is None or not await self._replays.get(
            item.referral_id, self._is_phone_five
        ):
            return await self._inner.send(item, clock=clock)
        deadline = asyncio.get_running_loop().time() + self.max_seconds
        first = await self._copy(item, clock, deadline)
        simulated = LoggedAttempt(
            clock(), AttemptResult(500, 0, SIMULATED_ERROR, None), NOTE_SIMULATED
        )
        retry = await self._copy(item, clock, deadline)
        stale = await self._copy(item, lambda: clock() - STALE_BY, deadline)
        attempts = (
            *_noted(first, NOTE_FIRST),
            simulated,
            *_noted(retry, NOTE_RETRY),
            *(_stale(attempt) for attempt in stale.attempts),
        )
        return Sent(attempts, first.outcome if first.outcome.ok else retry.outcome)

    async def _copy(self, item: Outgoing, clock: Clock, deadline: float) -> Sent:
        """One copy through the wrapped transport, signed for ``clock()``, by ``deadline``."""
        loop = asyncio.get_running_loop()
        started, attempted_at = loop.time(), clock()
        try:
            async with asyncio.timeout_at(deadline):
                return await self._inner.send(item, clock=clock)
        except TimeoutError:
            latency = int((loop.time() - started) * 1000)
            return Sent.single(attempted_at, AttemptResult(None, latency, OUT_OF_TIME, None))

    async def _is_phone_five(self, referral_id: str) -> bool:
        async with self._db.read() as conn:
            phone = (
                await conn.execute(
                    select(_referrals.c.patient_phone).where(
                        _referrals.c.id == referral_id, _referrals.c.environment == "test"
                    )
                )
            ).scalar_one_or_none()
        return scenario_for(open_text(self._ring, PHONE, phone)) == REPLAY_SCENARIO

    async def aclose(self) -> None:
        return None  # the wrapped transport is closed by its owner


def _noted(sent: Sent, note: str) -> tuple[LoggedAttempt, ...]:
    return tuple(replace(attempt, note=note) for attempt in sent.attempts)


def _stale(attempt: LoggedAttempt) -> LoggedAttempt:
    """Logged at the time it was sent (it was signed for ``STALE_BY`` earlier)."""
    result = attempt.result
    if result.ok:
        result = replace(result, error=STALE_ACCEPTED)
    return LoggedAttempt(attempt.attempted_at + STALE_BY, result, NOTE_STALE)
