"""The delivery worker: claims due deliveries, signs and sends them, records every attempt.

Claims: a batch of due ``pending`` deliveries gets a lease (``claimed_until``, ``claimed_by``).
On PostgreSQL the batch is picked with ``SELECT ... FOR UPDATE SKIP LOCKED``, so several
workers share the work without sending one delivery twice at the same time; on SQLite the
database's single writer serialises claimers. A worker that dies keeps its lease until
``claimed_until`` passes; then any worker claims those deliveries again (at-least-once).
Results are written back in one transaction per batch, only by the lease holder.

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

from sqlalchemy import bindparam, insert, or_, select, update

from rehabref.clock import as_utc, utcnow
from rehabref.db import Database, table
from rehabref.events import schedule
from rehabref.events.periodic import PeriodicJob, PeriodicJobs
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

RETRY_STATUSES_WITH_RETRY_AFTER = frozenset({429, 503})


@dataclass(frozen=True)
class Claimed:
    id: str
    event_id: str
    referral_id: str | None
    target_url: str
    attempt_count: int
    created_at: datetime
    partner_id: str
    environment: str
    body: bytes
    lease_until: datetime


@dataclass(frozen=True)
class WorkerConfig:
    retry_base_seconds: float = 5.0
    allow_loopback_targets: bool = False
    batch_size: int = 64
    # Sends in flight at once, over ``concurrency / 4`` small connection pools.
    concurrency: int = 32
    # Claim-send-record loops running side by side (one on SQLite): while one records its
    # results or waits on a slow target, another sends.
    pipelines: int = 2
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
        self.clock = clock
        self.rng = rng
        self.worker_id = new_id("wrk")[:40]
        self.transport: DeliveryTransport = transport or HttpTransport.create(
            allow_loopback=config.allow_loopback_targets, concurrency=config.concurrency
        )
        # A send never outlives its claim: the lease covers one whole send (else: released).
        self.lease_seconds = max(config.lease_seconds, self.transport.max_seconds + 5)
        self._secrets = SecretCache(db, box)
        self._semaphore = asyncio.Semaphore(config.concurrency)
        self._stopping = asyncio.Event()
        self._periodic_due: dict[str, float] = {}
        self._periodic_tasks: dict[str, asyncio.Task[None]] = {}

    # ----- one round -------------------------------------------------------------------

    def _due(self, now: datetime) -> Any:
        d = _deliveries
        return (
            select(d.c.id)
            .where(
                d.c.state == "pending",
                d.c.next_attempt_at <= now,
                or_(d.c.claimed_until.is_(None), d.c.claimed_until < now),
            )
            .order_by(d.c.next_attempt_at)
        )

    async def claim(self) -> list[Claimed]:
        now = self.clock()
        lease_until = now + timedelta(seconds=self.lease_seconds)
        due = self._due(now)
        if self.db.is_sqlite:
            # A cheap read first: most polls find nothing and must not take the write lock.
            async with self.db.read() as conn:
                if (await conn.execute(due.limit(1))).first() is None:
                    return []
        else:
            due = due.with_for_update(skip_locked=True, of=_deliveries)
        d, e = _deliveries, _events
        async with self.db.write() as conn:
            ids = list((await conn.execute(due.limit(self.config.batch_size))).scalars())
            if not ids:
                return []
            await conn.execute(
                update(d)
                .where(d.c.id.in_(ids))
                .values(
                    claimed_until=lease_until,
                    claimed_by=self.worker_id,
                )
            )
            rows = await conn.execute(
                select(
                    d.c.id,
                    d.c.event_id,
                    d.c.target_url,
                    d.c.attempt_count,
                    d.c.created_at,
                    e.c.referral_id,
                    e.c.partner_id,
                    e.c.environment,
                    e.c.body,
                )
                .join(e, e.c.id == d.c.event_id)
                .where(d.c.id.in_(ids))
            )
            return [
                Claimed(
                    id=row.id,
                    event_id=row.event_id,
                    referral_id=row.referral_id,
                    target_url=row.target_url,
                    attempt_count=row.attempt_count,
                    created_at=as_utc(row.created_at),
                    partner_id=row.partner_id,
                    environment=row.environment,
                    body=row.body.encode(),
                    lease_until=lease_until,
                )
                for row in rows
            ]

    async def _attempt(self, item: Claimed) -> tuple[Claimed, Sent | None]:
        async with self._semaphore:
            started = self.clock()
            if started + timedelta(seconds=self.transport.max_seconds) > item.lease_until:
                return item, None  # too late for this claim: release it
            try:
                signing = await self._secrets.get(item.partner_id, item.environment, started)
            except Exception as exc:  # unreadable secret: retried later like a failed send
                error = f"signing secret unavailable: {type(exc).__name__}"
                return item, Sent.single(started, AttemptResult(None, 0, error, None))
            if not signing:
                result = AttemptResult(None, 0, "no active signing secret", None)
                return item, Sent.single(started, result)
            outgoing = Outgoing(
                delivery_id=item.id,
                event_id=item.event_id,
                referral_id=item.referral_id,
                partner_id=item.partner_id,
                environment=item.environment,
                target_url=item.target_url,
                body=item.body,
                secrets=signing,
            )
            return item, await self.transport.send(outgoing, clock=self.clock)

    def _outcome(self, item: Claimed, sent: Sent) -> dict[str, Any]:
        # Every logged attempt counts, so attempt_count always equals the log's length.
        count = item.attempt_count + len(sent.attempts)
        result = sent.outcome
        now = self.clock()
        outcome: dict[str, Any] = {
            "b_id": item.id,
            "b_by": self.worker_id,
            "b_count": count,
            "b_code": result.status_code,
        }
        if result.ok:
            sent_at = sent.attempts[0].attempted_at
            return {**outcome, "b_state": "succeeded", "b_next": sent_at, "b_done": now}
        retry_after = None
        if result.status_code in RETRY_STATUSES_WITH_RETRY_AFTER:
            retry_after = schedule.retry_after_seconds(result.retry_after, now=now)
        when = schedule.next_attempt(
            attempt=count,
            created_at=item.created_at,
            now=now,
            base=self.config.retry_base_seconds,
            rng=self.rng,
            retry_after=retry_after,
        )
        if when is None:
            log.info("delivery failed", extra={"delivery_id": item.id, "attempts": count})
            return {**outcome, "b_state": "failed", "b_next": now, "b_done": now}
        return {**outcome, "b_state": "pending", "b_next": when, "b_done": None}

    async def process(self, claimed: list[Claimed]) -> None:
        gathered = await asyncio.gather(*(self._attempt(item) for item in claimed))
        results = [(item, sent) for item, sent in gathered if sent is not None]
        late = [item.id for item, sent in gathered if sent is None]
        attempts = [
            {
                "id": new_id("att"),
                "delivery_id": item.id,
                "attempted_at": attempt.attempted_at,
                "status_code": attempt.result.status_code,
                "latency_ms": attempt.result.latency_ms,
                "error": attempt.result.error,
                "response_excerpt": attempt.result.excerpt,
                "note": attempt.note,
            }
            for item, sent in results
            for attempt in sent.attempts
        ]
        outcomes = [self._outcome(item, sent) for item, sent in results]
        d = _deliveries
        async with self.db.write() as conn:
            if late:
                await conn.execute(
                    update(d)
                    .where(d.c.id.in_(late), d.c.claimed_by == self.worker_id)
                    .values(claimed_until=None, claimed_by=None)
                )
            if not results:
                return
            await conn.execute(insert(_attempts), attempts)
            await conn.execute(
                update(d)
                .where(d.c.id == bindparam("b_id"), d.c.claimed_by == bindparam("b_by"))
                .values(
                    state=bindparam("b_state"),
                    attempt_count=bindparam("b_count"),
                    last_status_code=bindparam("b_code"),
                    next_attempt_at=bindparam("b_next"),
                    completed_at=bindparam("b_done"),
                    claimed_until=None,
                    claimed_by=None,
                ),
                outcomes,
            )

    async def run_once(self) -> int:
        """Claim one batch, send it, record the results; returns the batch size."""
        claimed = await self.claim()
        if claimed:
            await self.process(claimed)
        return len(claimed)

    # ----- the loop --------------------------------------------------------------------

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
        """Deliver until ``stop()``; batches in flight are finished before returning."""
        log.info("delivery worker started", extra={"worker_id": self.worker_id})
        count = 1 if self.db.is_sqlite else max(1, self.config.pipelines)
        loops = [asyncio.create_task(self._pipeline()) for _ in range(count)]
        try:
            while not self._stopping.is_set():
                self._run_periodic()
                await self._sleep(0.1)
        except asyncio.CancelledError:
            for task in loops:
                task.cancel()
            raise
        finally:
            self._stopping.set()
            await asyncio.gather(*loops, return_exceptions=True)

    async def _pipeline(self) -> None:
        while not self._stopping.is_set():
            try:
                done = await self.run_once()
            except Exception as exc:  # database briefly unavailable: back off, keep going
                log.warning("delivery round failed", extra={"error_type": type(exc).__name__})
                done = 0
                await self._sleep(1.0)
            if done == 0:
                await self._sleep(self.config.idle_seconds)

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
