"""The message worker: claims due patient messages, sends each through its provider, and
records every outcome on its own row.

- **Claims** take a lease (``claimed_until``) in one short transaction; on PostgreSQL with
  ``FOR UPDATE SKIP LOCKED`` so several workers share the work. A worker killed mid-send
  leaves the row ``sending``; when the lease passes, any worker claims it again (at least
  once: the providers have no idempotency key, so a crash between their answer and our
  record can send a message twice, never zero times).
- **Order**: a message is not claimed while an earlier one to the same recipient is still
  owed, so a patient reads the questions in the order the dialogue asked them.
- **Opt-outs** are checked at the claim: a message to a number that said STOP is
  ``suppressed`` (except the one acknowledgement of the STOP itself). The recipient is
  opened there and matched under every key of the ring, so a STOP said before a key
  rotation still holds; recipient and content stay sealed in the database and are opened
  only in memory, just before the provider call (channels/sealing.py).
- **Outcomes** are recorded per message, only by the lease holder: accepted -> ``sent``;
  retryable -> ``pending`` again after the backoff of ``channels.policy``; refused, or out of
  retries -> ``failed`` and handed to ``Fallback`` (SMS, then a coordinator).
- ``send_now`` is the create's single immediate try (a short timeout, right after the
  commit); whatever it does not finish, the worker's next round does.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, case, exists, or_, select, update

from rehabref.channels.content import Content, from_json, with_withdrawal_link
from rehabref.channels.failures import Fallback
from rehabref.channels.outbox import OPT_OUT_ACK, WAITING
from rehabref.channels.outcome import Accepted, Outcome, Refused, Retry
from rehabref.channels.policy import next_attempt
from rehabref.channels.providers import ChannelProviders
from rehabref.channels.sealing import opened_message, opt_out_refs
from rehabref.clock import as_utc, utcnow
from rehabref.crypto import SealedValueError
from rehabref.db import Database, table
from rehabref.tables.channels import MessageOptOut, OutboundMessage

log = logging.getLogger("rehabref.messages")
UNOPENABLE = "the message cannot be opened with the key ring"
_messages = table(OutboundMessage)
_opt_outs = table(MessageOptOut)

# A provider took the message (and may since have reported on it).
ACCEPTED = frozenset({"sent", "delivered", "read"})
# The longest one provider call may take (at most half the lease, so it never outlives it).
MAX_SEND_SECONDS = 15.0


@dataclass(frozen=True)
class MessageWorkerConfig:
    retry_base_seconds: float = 5.0
    lease_seconds: float = 60.0
    batch_size: int = 32
    # Provider calls in flight at once in one round.
    concurrency: int = 32
    # Full batches run back to back, up to this many, before the worker polls again.
    rounds_per_poll: int = 20


@dataclass(frozen=True)
class ClaimedMessage:
    id: str
    referral_id: str | None
    environment: str
    channel: str
    recipient: str
    recipient_ref: str
    purpose: str
    content: dict[str, Any]
    attempts: int
    created_at: datetime
    lease_until: datetime

    def as_row(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "referral_id": self.referral_id,
            "environment": self.environment,
            "channel": self.channel,
            "recipient": self.recipient,
            "purpose": self.purpose,
            "content": self.content,
        }


class MessageWorker:
    def __init__(
        self,
        db: Database,
        providers: ChannelProviders,
        fallback: Fallback,
        config: MessageWorkerConfig,
        *,
        clock: Callable[[], datetime] = utcnow,
        rng: Callable[[], float] = random.random,
        withdrawal_link: Callable[[str], str] | None = None,
    ) -> None:
        self.db = db
        # referral id -> the patient's consent-withdrawal link, added to every message.
        self.withdrawal_link = withdrawal_link
        self.providers = providers
        self.fallback = fallback
        self.config = config
        self.clock = clock
        self.rng = rng
        self._semaphore = asyncio.Semaphore(config.concurrency)
        self._send_timeout = min(MAX_SEND_SECONDS, config.lease_seconds / 2)
        # Immediate tries that outlived their caller's timeout (kept so they finish).
        self._background: set[asyncio.Task[str]] = set()

    def _claimable(self, now: datetime) -> Any:
        m = _messages
        earlier = _messages.alias("earlier")
        earlier_owed = exists().where(
            earlier.c.recipient_ref == m.c.recipient_ref,
            earlier.c.state.in_(WAITING),
            earlier.c.id < m.c.id,
        )
        due = or_(
            and_(m.c.state == "pending", m.c.next_attempt_at <= now),
            and_(m.c.state == "sending", m.c.claimed_until < now),
        )
        return select(m.c.id).where(due, ~earlier_owed).order_by(m.c.next_attempt_at)

    async def claim(self, *, only: str | None = None) -> list[ClaimedMessage]:
        now = self.clock()
        lease_until = now + timedelta(seconds=self.config.lease_seconds)
        query = self._claimable(now)
        if only is not None:
            query = query.where(_messages.c.id == only)
        if self.db.is_sqlite:
            # A cheap read first: most rounds find nothing and must not take the write lock.
            async with self.db.read() as conn:
                if (await conn.execute(query.limit(1))).first() is None:
                    return []
        else:
            query = query.with_for_update(skip_locked=True, of=_messages)
        m, o = _messages, _opt_outs
        # The ring that seals messages (the fallback's, which writes them too) opens them.
        ring = self.fallback.ring
        async with self.db.write() as conn:
            ids = list((await conn.execute(query.limit(self.config.batch_size))).scalars())
            if not ids:
                return []
            found = await conn.execute(select(m).where(m.c.id.in_(ids)))
            rows, unopenable = [], []
            for row in found.mappings():
                try:
                    rows.append(opened_message(ring, row))
                except SealedValueError:  # sealed under a key since removed, or damaged
                    unopenable.append(row["id"])
            if unopenable:
                # Failed for good, not retried: one such row must not hold up the queue.
                await conn.execute(
                    update(m)
                    .where(m.c.id.in_(unopenable))
                    .values(
                        state="failed",
                        last_error=UNOPENABLE,
                        claimed_until=None,
                        updated_at=now,
                    )
                )
                log.warning("messages cannot be opened", extra={"message_ids": unopenable})
            refs_of = {row["id"]: opt_out_refs(ring, row["recipient"]) for row in rows}
            every_ref = {ref for refs in refs_of.values() for ref in refs}
            stopped = set(
                (
                    await conn.execute(
                        select(o.c.recipient_ref).where(
                            o.c.recipient_ref.in_(every_ref), o.c.opted_out.is_(True)
                        )
                    )
                ).scalars()
            )
            suppressed = [
                row["id"]
                for row in rows
                if row["purpose"] != OPT_OUT_ACK and stopped.intersection(refs_of[row["id"]])
            ]
            if suppressed:
                await conn.execute(
                    update(m)
                    .where(m.c.id.in_(suppressed))
                    .values(
                        state="suppressed",
                        last_error="the recipient opted out (STOP)",
                        claimed_until=None,
                        updated_at=now,
                    )
                )
            sending = [r for r in rows if r["id"] not in suppressed]
            if sending:
                await conn.execute(
                    update(m)
                    .where(m.c.id.in_([r["id"] for r in sending]))
                    .values(
                        state="sending",
                        claimed_until=lease_until,
                        attempts=m.c.attempts + 1,
                        updated_at=now,
                    )
                )
        return [
            ClaimedMessage(
                id=r["id"],
                referral_id=r["referral_id"],
                environment=r["environment"],
                channel=r["channel"],
                recipient=r["recipient"],
                recipient_ref=r["recipient_ref"],
                purpose=r["purpose"],
                content=r["content"],
                attempts=r["attempts"] + 1,
                created_at=as_utc(r["created_at"]),
                lease_until=lease_until,
            )
            for r in sending
        ]

    def content_of(self, message: ClaimedMessage) -> Content:
        """What the patient reads: the stored message and, for a referral's message other
        than the STOP confirmation, the withdrawal link."""
        content = from_json(message.content)
        if self.withdrawal_link is None or message.referral_id is None:
            return content
        if message.purpose == OPT_OUT_ACK:
            return content
        return with_withdrawal_link(content, self.withdrawal_link(message.referral_id))

    async def _send(self, message: ClaimedMessage) -> Outcome:
        provider = self.providers.provider(message.environment, message.channel)
        if provider is None:
            return Refused(f"no {message.channel} provider is configured")
        async with self._semaphore:
            try:
                # The clients' timeouts are per phase (connect, each read, each SMTP
                # command); this bounds the whole call well inside the lease.
                async with asyncio.timeout(self._send_timeout):
                    return await provider.send(
                        to=message.recipient,
                        content=self.content_of(message),
                        message_id=message.id,
                    )
            except TimeoutError:
                return Retry(f"{message.channel} provider did not answer in time")
            except Exception as exc:  # a client bug must not lose the message
                return Retry(f"provider client error ({type(exc).__name__})")

    async def record(self, message: ClaimedMessage, outcome: Outcome) -> str:
        """Write one outcome; the message's new state."""
        now = self.clock()
        m = _messages
        # Only the lease holder records. A provider status may have moved the message on
        # while we waited for the provider's answer (delivered, even failed): it is kept.
        mine = and_(m.c.id == message.id, m.c.claimed_until == message.lease_until)
        provider = self.providers.provider(message.environment, message.channel)
        provider_name = provider.name if provider is not None else None
        async with self.db.write() as conn:
            if isinstance(outcome, Accepted):
                values: dict[str, Any] = {
                    "state": case((m.c.state == "sending", "sent"), else_=m.c.state),
                    "provider": provider_name,
                    "provider_message_id": outcome.provider_message_id[:120],
                    "sent_at": now,
                    "status_at": now,
                    "last_error": None,
                }
            else:
                mine = and_(mine, m.c.state == "sending")
                when = (
                    next_attempt(
                        attempts=message.attempts,
                        created_at=message.created_at,
                        now=now,
                        base=self.config.retry_base_seconds,
                        rng=self.rng,
                        retry_after=outcome.retry_after,
                    )
                    if isinstance(outcome, Retry)
                    else None
                )
                values = (
                    {"state": "pending", "next_attempt_at": when}
                    if when is not None
                    else {"state": "failed"}
                )
                values.update(provider=provider_name, last_error=outcome.reason[:200])
            state = "sent" if isinstance(outcome, Accepted) else str(values["state"])
            values.update(claimed_until=None, updated_at=now)
            written = await conn.execute(update(m).where(mine).values(**values))
            if not written.rowcount:
                return "lost_lease"  # another worker claimed it again after our lease passed
            if state == "failed":
                await self.fallback.failed(conn, message.as_row(), values["last_error"], now)
        log.info(
            "patient message",
            extra={
                "message_id": message.id,
                "channel": message.channel,
                "purpose": message.purpose,
                "state": state,
                "attempt": message.attempts,
                "reason": values["last_error"],
            },
        )
        return state

    async def _deliver(self, message: ClaimedMessage) -> str:
        return await self.record(message, await self._send(message))

    async def run_once(self, _db: Database | None = None) -> int:
        """Claim, send and record batches while full ones keep coming (a backlog drains
        without waiting for the next poll); how many messages were claimed."""
        total = 0
        for _ in range(self.config.rounds_per_poll):
            claimed = await self.claim()
            if claimed:
                await asyncio.gather(*(self._deliver(message) for message in claimed))
            total += len(claimed)
            if len(claimed) < self.config.batch_size:
                break
        return total

    async def _accepted_by(self, message_id: str, deadline: float) -> bool:
        """Whether the message was accepted (by whoever sent it) before ``deadline``."""
        loop = asyncio.get_running_loop()
        while True:
            async with self.db.read() as conn:
                state = (
                    await conn.execute(
                        select(_messages.c.state).where(_messages.c.id == message_id)
                    )
                ).scalar()
            if state in ACCEPTED:
                return True
            if state not in WAITING or loop.time() >= deadline:
                return False
            await asyncio.sleep(0.05)

    async def send_now(self, message_id: str, *, timeout: float) -> bool:
        """Try one message at once; True when its provider accepted it within ``timeout``.

        When the try takes longer it goes on in the background of this process; if the
        process dies, the lease passes and the worker sends the message.
        """
        deadline = asyncio.get_running_loop().time() + timeout
        claimed = await self.claim(only=message_id)
        if not claimed:  # a worker took it first (or it waits behind an earlier message)
            return await self._accepted_by(message_id, deadline)
        task = asyncio.ensure_future(self._deliver(claimed[0]))
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        try:
            state = await asyncio.wait_for(asyncio.shield(task), timeout=timeout)
        except TimeoutError:
            return False
        return state == "sent"
