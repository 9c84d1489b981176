"""Backoff schedule, 24 h window, Retry-After and leases, with an injected
clock and random source (no sleeps): a real worker, database and loopback receiver."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text

from rehabref.config import load_settings
from rehabref.db import Database
from rehabref.events.outbox import NewEvent, record_events
from rehabref.events.schedule import backoff_seconds, retry_after_seconds
from rehabref.events.worker import DeliveryWorker, WorkerConfig
from rehabref.instance_secret import SecretBox
from tests.support.databases import fresh_database
from tests.support.partners import TEST_SECRET_KEY, onboard
from tests.support.receiver import Receiver, always

T0 = datetime(2026, 11, 22, 8, 0, tzinfo=UTC)


class FakeClock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture(scope="module")
def db_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with fresh_database(tmp_path_factory.mktemp("schedule")) as url:
        yield url


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def _seed(db: Database, partner_id: str, url: str) -> str:
    async with db.write() as conn:
        (event_id,) = await record_events(
            conn,
            SecretBox(TEST_SECRET_KEY).ring,
            partner_id=partner_id,
            environment="test",
            events=[
                NewEvent(
                    "appointment.booked",
                    {"referral_id": "ref_x", "status": "booked"},
                    extra_targets=(url,),
                    only_extra_targets=True,
                    occurred_at=T0,
                )
            ],
        )
    return event_id


async def _delivery(db: Database, event_id: str) -> Any:
    async with db.read() as conn:
        return (
            await conn.execute(
                text("SELECT * FROM deliveries WHERE event_id = :e"), {"e": event_id}
            )
        ).one()


def _utc(value: Any) -> datetime:
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def _worker(db: Database, clock: FakeClock, rng: float = 0.5, **config: Any) -> DeliveryWorker:
    return DeliveryWorker(
        db,
        SecretBox(TEST_SECRET_KEY),
        WorkerConfig(retry_base_seconds=5, allow_loopback_targets=True, **config),
        clock=clock,
        rng=lambda: rng,
    )


def test_backoff_grows_with_jitter_added_and_is_capped():
    assert backoff_seconds(1, base=5, rng=lambda: 0.0) == 5
    assert backoff_seconds(1, base=5, rng=lambda: 0.999) < 10
    assert backoff_seconds(2, base=5, rng=lambda: 0.0) == 10
    assert backoff_seconds(4, base=5, rng=lambda: 0.5) == 60
    assert backoff_seconds(40, base=5, rng=lambda: 0.9) == 3600
    for attempt in range(1, 12):
        worst_now = backoff_seconds(attempt, base=5, rng=lambda: 0.9999)
        best_next = backoff_seconds(attempt + 1, base=5, rng=lambda: 0.0)
        assert best_next >= worst_now


def test_retry_after_parsing():
    assert retry_after_seconds("120", now=T0) == 120
    assert retry_after_seconds("999999", now=T0) == 3600
    assert retry_after_seconds("Sun, 22 Nov 2026 08:01:00 GMT", now=T0) == 60
    assert retry_after_seconds("soon", now=T0) is None
    assert retry_after_seconds(None, now=T0) is None


def test_schedule_until_24_hours_then_failed(db_url):
    partner = onboard(db_url, name="Schedule")
    receiver = Receiver(behaviour=always(500)).start()

    async def scenario() -> tuple[list[float], Any, int]:
        db = Database(db_url)
        clock = FakeClock(T0)
        worker = _worker(db, clock)
        try:
            event_id = await _seed(db, partner["partner_id"], receiver.url)
            delays: list[float] = []
            while True:
                assert await worker.run_once() == 1
                row = await _delivery(db, event_id)
                if row.state != "pending":
                    break
                due = _utc(row.next_attempt_at)
                delays.append((due - clock.now).total_seconds())
                clock.now = due - timedelta(seconds=1)
                assert await worker.run_once() == 0  # not due yet
                clock.now = due
            return delays, row, len(receiver.received)
        finally:
            await worker.aclose()
            await db.dispose()

    try:
        delays, row, received = run(scenario())
    finally:
        receiver.stop()
    expected = [min(5 * 2 ** (n - 1) * 1.5, 3600) for n in range(1, len(delays) + 1)]
    assert delays == pytest.approx(expected)
    assert delays[:4] == pytest.approx([7.5, 15, 30, 60])
    # every attempt fell inside the window, and one more delay would have left it
    total = sum(delays)
    assert total <= 24 * 3600 < total + min(5 * 2 ** len(delays) * 1.5, 3600)
    assert row.state == "failed"
    assert row.attempt_count == len(delays) + 1 == received
    assert row.claimed_by is None and row.completed_at is not None


def test_retry_after_is_honoured_on_429(db_url):
    partner = onboard(db_url, name="RetryAfter")
    receiver = Receiver(behaviour=lambda _r, _i: (429, {"Retry-After": "120"}, 0.0)).start()

    async def scenario() -> float:
        db = Database(db_url)
        clock = FakeClock(T0)
        worker = _worker(db, clock)
        try:
            event_id = await _seed(db, partner["partner_id"], receiver.url)
            assert await worker.run_once() == 1
            row = await _delivery(db, event_id)
            return (_utc(row.next_attempt_at) - T0).total_seconds()
        finally:
            await worker.aclose()
            await db.dispose()

    try:
        assert run(scenario()) == 120
    finally:
        receiver.stop()


def test_lease_blocks_other_claimers_until_it_expires(db_url):
    partner = onboard(db_url, name="Lease")

    async def scenario() -> None:
        db = Database(db_url)
        clock = FakeClock(T0)
        first = _worker(db, clock, lease_seconds=60)
        second = _worker(db, clock, lease_seconds=60)
        try:
            event_id = await _seed(db, partner["partner_id"], "http://127.0.0.1:9/x")
            claimed = await first.claim()
            assert [c.event_id for c in claimed] == [event_id]
            assert await second.claim() == []  # leased to the first (which then "dies")
            clock.now = T0 + timedelta(seconds=61)
            again = await second.claim()
            assert [c.event_id for c in again] == [event_id]
            row = await _delivery(db, event_id)
            assert row.claimed_by == second.worker_id
            await second.release_claims()  # graceful shutdown gives the claim back
            row = await _delivery(db, event_id)
            assert row.claimed_by is None and row.claimed_until is None
            assert row.state == "pending"
        finally:
            await first.aclose()
            await second.aclose()
            await db.dispose()

    run(scenario())


def test_periodic_jobs_run_in_the_worker_loop(db_url):
    from rehabref import wiring

    settings = load_settings({"REHABREF_DATABASE_URL": db_url})
    channels = wiring.channel_providers(settings)
    messages = wiring.message_worker(Database(db_url), settings, channels, SecretBox("k" * 32))
    wired = wiring.periodic_jobs(
        wiring.coverage_sources(SecretBox("k" * 32).ring),
        wiring.roster_sources(),
        messages,
        ring=SecretBox("k" * 32).ring,
        settings=settings,
    )
    assert set(wired) == {
        "rights.retention",
        "scheduled_jobs.run_due",
        "channels.send_due",
        "intake.nudge_silent",
        "billing.draft_payer_invoices",
    }
    ran: list[str] = []

    async def job(db: Database) -> None:
        async with db.read() as conn:
            await conn.execute(text("SELECT 1"))
        ran.append("ok")

    async def failing(db: Database) -> None:
        raise RuntimeError("boom")

    periodic = {"test.job": (0.01, job), "test.failing": (0.01, failing)}

    async def scenario() -> None:
        db = Database(db_url)
        worker = DeliveryWorker(
            db,
            SecretBox(TEST_SECRET_KEY),
            WorkerConfig(idle_seconds=0.01),
            periodic=periodic,
        )
        task = asyncio.create_task(worker.run())
        try:
            for _ in range(500):
                if len(ran) >= 2:
                    break
                await asyncio.sleep(0.01)
        finally:
            worker.stop()
            await task
            await worker.aclose()
            await db.dispose()

    run(scenario())
    assert len(ran) >= 2  # ran repeatedly, and the failing job did not stop the loop
