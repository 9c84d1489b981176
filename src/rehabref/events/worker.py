"""The delivery worker: claims due deliveries fairly, sends them, records every attempt.

Claims: due ``pending`` deliveries get a lease (``claimed_until``, ``claimed_by``), chosen by
``fair_claim.fair_due``: round-robin across partners and endpoints, never more in flight
per endpoint or per partner than its cap, nothing for an endpoint whose circuit is open or
that is disabled. Claimers are serialised (PostgreSQL: a transaction-level advisory lock;
SQLite: its single writer), so the caps hold across workers. A worker that dies keeps its
lease until ``claimed_until`` passes; then any worker claims those deliveries again
(at-least-once).

The loop claims only as many deliveries as it has free send slots, and starts each one at
once, so a claim never expires before its send; each result is recorded as soon as it is
known (results that finish together share one transaction), so a slow send holds up
nothing but its own slot. Results are written only by the lease holder; each endpoint's
results update its health (``endpoint_state.record_results``).

Each claimed delivery goes with the partner's active secrets to the worker's
``DeliveryTransport`` (``events/transport.py``); every attempt it reports is logged.

The worker also runs the periodic jobs it is given (``wiring.periodic_jobs``), e.g. the
idempotency purge.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, text, update

from rehabref.clock import as_utc, utcnow
from rehabref.crypto import SealedValueError
from rehabref.db import Database, table
from rehabref.events import results
from rehabref.events.fair_claim import Caps, fair_due
from rehabref.events.periodic import PeriodicJob, PeriodicJobs
from rehabref.events.results import Claimed, Done
from rehabref.events.sealing import event_body
from rehabref.events.secrets import SecretCache
from rehabref.events.sender import AttemptResult
from rehabref.events.transport import DeliveryTransport, HttpTransport, Outgoing, Sent
from rehabref.ids import new_id
from rehabref.instance_secret import SecretBox
from rehabref.tables.events import Delivery, DeliveryAttempt, Event

log = logging.getLogger("rehabref.worker")

__all__ = ["DeliveryWorker", "WorkerConfig"]

_deliveries = table(Delivery)
_attempts = table(DeliveryAttempt)
_events = table(Event)

# Serialises claimers on PostgreSQL (any constant: only claims take it, for milliseconds).
CLAIM_LOCK_KEY = 0x7265686162  # "rehab"


@dataclass(frozen=True)
class WorkerConfig:
    retry_base_seconds: float = 5.0
    allow_loopback_targets: bool = False
    batch_size: int = 64
    # Sends in flight at once, over ``concurrency / 4`` small connection pools.
    concurrency: int = 32
    # In flight at once per endpoint, and per partner (``fair_claim.Caps``).
    endpoint_concurrency: int = 8
    partner_concurrency: int = 16
    lease_seconds: float = 120.0
    idle_seconds: float = 0.05


class DeliveryWorker:
    def __init__(
        self,
        db: Database,
        box: SecretBox,
        config: WorkerConfig,
        *,
        clock: Callable[[], datetime] = utcnow,
        rng: Callable[[], float] = random.random,
        transport: DeliveryTransport | None = None,
        periodic: PeriodicJobs | None = None,
    ) -> None:
        self.db = db
        self.periodic: PeriodicJobs = periodic or {}
        self.config = config
        self.caps = Caps(lane=config.endpoint_concurrency, partner=config.partner_concurrency)
        self.clock = clock
        self.rng = rng
        self.worker_id = new_id("wrk")[:40]
        self.transport: DeliveryTransport = transport or HttpTransport.create(
            allow_loopback=config.allow_loopback_targets, concurrency=config.concurrency
        )
        # A send never outlives its claim: the lease covers one whole send, and a delivery
        # is claimed only when a send slot is free for it at once.
        self.lease_seconds = max(config.lease_seconds, self.transport.max_seconds + 5)
        self._secrets = SecretCache(db, box)
        # Opens the delivery bodies; seals the e-mail telling a partner its endpoint was
        # disabled (a patient-message row).
        self._ring = box.ring
        self._stopping = asyncio.Event()
        # Set whenever results are recorded: their claims are released, caps have room.
        self._recorded = asyncio.Event()
        self._sending: set[asyncio.Task[None]] = set()
        # Results on their way to the database; None: the loop is stopping.
        self._results: asyncio.Queue[Done | None] = asyncio.Queue()
        self._periodic_due: dict[str, float] = {}
        self._periodic_tasks: dict[str, asyncio.Task[None]] = {}

    # ----- claiming ----------------------------------------------------------------------

    async def claim(self, limit: int | None = None) -> list[Claimed]:
        """Lease up to ``limit`` (default: a batch) due deliveries, fairly chosen."""
        now = self.clock()
        lease_until = now + timedelta(seconds=self.lease_seconds)
        size = self.config.batch_size if limit is None else min(limit, self.config.batch_size)
        due = fair_due(now=now, caps=self.caps, limit=size)
        if self.db.is_sqlite:
            # A cheap read first: most polls find nothing and must not take the write lock.
            async with self.db.read() as conn:
                if (await conn.execute(due.limit(1))).first() is None:
                    return []
        d, e = _deliveries, _events
        async with self.db.write() as conn:
            if not self.db.is_sqlite:
                await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": CLAIM_LOCK_KEY})
            ids = list((await conn.execute(due)).scalars())
            if not ids:
                return []
            await conn.execute(
                update(d)
                .where(d.c.id.in_(ids), d.c.state == "pending")
                .values(claimed_until=lease_until, claimed_by=self.worker_id)
            )
            rows = await conn.execute(
                select(
                    d.c.id,
                    d.c.event_id,
                    d.c.endpoint_id,
                    d.c.target_url,
                    d.c.attempt_count,
                    d.c.created_at,
                    e.c.referral_id,
                    e.c.partner_id,
                    e.c.environment,
                    e.c.body,
                )
                .join(e, e.c.id == d.c.event_id)
                .where(d.c.id.in_(ids), d.c.claimed_by == self.worker_id)
            )
            return [
                Claimed(
                    id=row.id,
                    event_id=row.event_id,
                    endpoint_id=row.endpoint_id,
                    referral_id=row.referral_id,
                    target_url=row.target_url,
                    attempt_count=row.attempt_count,
                    created_at=as_utc(row.created_at),
                    partner_id=row.partner_id,
                    environment=row.environment,
                    stored_body=row.body,
                    lease_until=lease_until,
                )
                for row in rows
            ]

    # ----- sending -----------------------------------------------------------------------

    async def send(self, item: Claimed) -> Done:
        started = self.clock()
        try:
            signing = await self._secrets.get(item.partner_id, item.environment, started)
        except Exception as exc:  # unreadable secret: retried later like a failed send
            error = f"signing secret unavailable: {type(exc).__name__}"
            return Done(item, Sent.single(started, AttemptResult(None, 0, error, None)), False)
        if not signing:
            result = AttemptResult(None, 0, "no active signing secret", None)
            return Done(item, Sent.single(started, result), False)
        try:
            # Opened here, just before signing: the plain envelope lives only for the send.
            body = event_body(self._ring, item.stored_body)
        except SealedValueError:  # sealed under a key since removed from the ring
            result = AttemptResult(None, 0, "event body cannot be opened with the key ring", None)
            return Done(item, Sent.single(started, result), False)
        outgoing = Outgoing(
            delivery_id=item.id,
            event_id=item.event_id,
            referral_id=item.referral_id,
            partner_id=item.partner_id,
            environment=item.environment,
            target_url=item.target_url,
            body=body,
            secrets=signing,
        )
        return Done(item, await self.transport.send(outgoing, clock=self.clock), True)

    # ----- recording ---------------------------------------------------------------------

    async def record(self, done: list[Done]) -> None:
        """Log the attempts and settle the deliveries, one transaction for all of ``done``."""
        if not done:
            return
        plan = results.plan(
            done,
            worker_id=self.worker_id,
            now=self.clock(),
            base=self.config.retry_base_seconds,
            rng=self.rng,
        )
        async with self.db.write() as conn:
            disabled = await results.write(
                conn, plan, ring=self._ring, now=self.clock(), lock=not self.db.is_sqlite
            )
        for endpoint_id in disabled:
            log.warning("webhook endpoint disabled", extra={"endpoint_id": endpoint_id})

    async def process(self, claimed: list[Claimed]) -> None:
        """Send every claimed delivery, then record them all (``run_once``)."""
        await self.record(list(await asyncio.gather(*(self.send(item) for item in claimed))))

    async def run_once(self) -> int:
        """Claim one batch, send it, record the results; returns the batch size."""
        claimed = await self.claim()
        if claimed:
            await self.process(claimed)
        return len(claimed)

    # ----- the loop ----------------------------------------------------------------------

    def _run_periodic(self) -> None:
        now = time.monotonic()
        for name, (interval, fn) in self.periodic.items():
            due = self._periodic_due.setdefault(name, now + min(interval, 5.0))
            running = self._periodic_tasks.get(name)
            if now < due or (running is not None and not running.done()):
                continue
            self._periodic_due[name] = now + interval
            self._periodic_tasks[name] = asyncio.create_task(self._guarded(name, fn))

    async def _guarded(self, name: str, fn: PeriodicJob) -> None:
        try:
            await fn(self.db)
        except Exception as exc:  # a periodic job must not stop deliveries
            log.warning(
                "periodic job failed", extra={"job": name, "error_type": type(exc).__name__}
            )

    async def run(self) -> None:
        """Deliver until ``stop()``; sends in flight are finished and recorded first."""
        log.info("delivery worker started", extra={"worker_id": self.worker_id})
        feeder = asyncio.create_task(self._feed())
        recorder = asyncio.create_task(self._record_results())
        try:
            while not self._stopping.is_set():
                self._run_periodic()
                await self._sleep(0.1)
        except asyncio.CancelledError:
            feeder.cancel()
            recorder.cancel()
            for task in list(self._sending):
                task.cancel()
            raise
        finally:
            self._stopping.set()
            await asyncio.gather(feeder, return_exceptions=True)
            await asyncio.gather(*self._sending, return_exceptions=True)
            await self._results.put(None)
            await asyncio.gather(recorder, return_exceptions=True)

    async def _feed(self) -> None:
        """Claim as many deliveries as there are free send slots, and start each at once."""
        while not self._stopping.is_set():
            free = self.config.concurrency - len(self._sending)
            if free <= 0:
                await asyncio.wait(self._sending, return_when=asyncio.FIRST_COMPLETED)
                continue
            self._recorded.clear()
            try:
                claimed = await self.claim(free)
            except Exception as exc:  # database briefly unavailable: back off, keep going
                log.warning("delivery claim failed", extra={"error_type": type(exc).__name__})
                await self._sleep(1.0)
                continue
            for item in claimed:
                task = asyncio.create_task(self._send_one(item))
                self._sending.add(task)
                task.add_done_callback(self._sending.discard)
            if len(claimed) < min(free, self.config.batch_size):
                # Nothing more is due, or what is due waits for a cap: try again when a
                # recorded result frees a slot, or after the idle pause.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._recorded.wait(), self.config.idle_seconds)

    async def _send_one(self, item: Claimed) -> None:
        await self._results.put(await self.send(item))

    async def _record_results(self) -> None:
        """Record results as they come; those that finished together share a transaction."""
        pending: list[Done] = []
        stopping = False
        while not (stopping and not pending):
            if not pending:
                first = await self._results.get()
                if first is None:
                    return
                pending.append(first)
            while not self._results.empty():
                more = self._results.get_nowait()
                if more is None:
                    stopping = True
                else:
                    pending.append(more)
            try:
                await self.record(pending)
                pending = []
                self._recorded.set()
            except Exception as exc:  # database briefly unavailable: keep them, try again
                log.warning("recording results failed", extra={"error_type": type(exc).__name__})
                if stopping:
                    return  # their claims expire; another worker sends them again
                await asyncio.sleep(1.0)

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), timeout=seconds)

    def stop(self) -> None:
        self._stopping.set()

    async def release_claims(self) -> None:
        d = _deliveries
        async with self.db.write() as conn:
            await conn.execute(
                update(d)
                .where(d.c.claimed_by == self.worker_id, d.c.state == "pending")
                .values(claimed_until=None, claimed_by=None)
            )

    async def aclose(self) -> None:
        for task in self._periodic_tasks.values():
            task.cancel()
        try:
            await self.release_claims()
        except Exception as exc:
            log.warning("releasing claims failed", extra={"error_type": type(exc).__name__})
        await self.transport.aclose()


class WorkerHandle:
    """A worker running as a task in this process (``rehabref serve``)."""

    def __init__(self, worker: DeliveryWorker) -> None:
        self.worker = worker
        self.task = asyncio.create_task(worker.run())

    async def shutdown(self, timeout: float = 15.0) -> None:
        self.worker.stop()
        try:
            await asyncio.wait_for(asyncio.shield(self.task), timeout=timeout)
        except (TimeoutError, Exception):
            self.task.cancel()
            with contextlib.suppress(BaseException):
                await self.task
        await self.worker.aclose()


def config_from(settings: Any) -> WorkerConfig:
    return WorkerConfig(
        retry_base_seconds=settings.webhook_retry_base_seconds,
        allow_loopback_targets=settings.allow_loopback_webhook_targets,
        lease_seconds=settings.webhook_lease_seconds,
    )


def start_in_process(
    db: Database,
    box: SecretBox,
    settings: Any,
    periodic: PeriodicJobs,
    transport: Callable[[WorkerConfig], DeliveryTransport],
) -> WorkerHandle:
    """Start the worker inside a server process (``rehabref serve`` without ``--no-worker``)."""
    config = config_from(settings)
    worker = DeliveryWorker(db, box, config, periodic=periodic, transport=transport(config))
    return WorkerHandle(worker)
