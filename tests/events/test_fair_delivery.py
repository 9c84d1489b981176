"""Fair webhook delivery with real loopback servers (one that hangs, fast ones), a real worker
and database: a hostile partner's hanging endpoints do not delay anyone else; circuits open;
endpoints are disabled after a day of failures and re-enabled by API; deleting an endpoint
cancels what it is owed; the sandbox trigger is limited."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from rehabref.clock import as_utc
from rehabref.db import Database
from rehabref.events.endpoint_health import DISABLE_AFTER, FAILURES_TO_OPEN
from rehabref.events.outbox import NewEvent, record_events
from rehabref.events.responses import EndpointHealth
from rehabref.events.subscriptions import create_endpoint, enable_endpoint, get_endpoint
from rehabref.events.worker import DeliveryWorker, WorkerConfig
from rehabref.instance_secret import SecretBox
from rehabref.scope import PartnerScope
from tests.conftest import auth
from tests.console.operators import make_operator, sign_in
from tests.support.databases import fresh_database
from tests.support.messages import opened_content, opened_recipient
from tests.support.partners import TEST_SECRET_KEY, onboard
from tests.support.receiver import Receiver, always
from tests.support.server import ServerProcess

T0 = datetime(2026, 11, 24, 8, 0, tzinfo=UTC)


class FakeClock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


class HangingServer:
    """Accepts connections, reads the request head, and never answers. Counts how many
    requests per path it holds at once."""

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(512)
        self.port = self._sock.getsockname()[1]
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        self.holding: dict[str, int] = {}
        self.max_holding: dict[str, int] = {}
        self._stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def _accept(self) -> None:
        while not self._stopped:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._hold, args=(conn,), daemon=True).start()

    def _hold(self, conn: socket.socket) -> None:
        with self._lock:
            self._open.append(conn)
        head = b""
        while b"\r\n\r\n" not in head:
            try:
                chunk = conn.recv(4096)
            except OSError:
                return
            if not chunk:
                return
            head += chunk
        path = head.split(b" ", 2)[1].decode()
        with self._lock:
            self.holding[path] = self.holding.get(path, 0) + 1
            self.max_holding[path] = max(self.max_holding.get(path, 0), self.holding[path])
        try:
            while conn.recv(4096):  # until the client gives up
                pass
        except OSError:
            pass
        with self._lock:
            self.holding[path] -= 1

    def stop(self) -> None:
        self._stopped = True
        self._sock.close()
        with self._lock:
            for conn in self._open:
                conn.close()


@pytest.fixture(scope="module")
def db_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with fresh_database(tmp_path_factory.mktemp("fair")) as url:
        yield url


@pytest.fixture
def own_db(tmp_path: Path) -> Iterator[str]:
    """A database of the test's own: its worker claims only what the test wrote."""
    with fresh_database(tmp_path) as url:
        yield url


async def _endpoint(db: Database, partner_id: str, url: str) -> str:
    async with db.write() as conn:
        record = await create_endpoint(
            conn, scope=PartnerScope(partner_id, "test"), url=url, enabled_events=None
        )
    return record.endpoint_id


async def _events(db: Database, partner_id: str, count: int, when: datetime | None = None) -> None:
    async with db.write() as conn:
        await record_events(
            conn,
            SecretBox(TEST_SECRET_KEY).ring,
            partner_id=partner_id,
            environment="test",
            events=[
                NewEvent("referral.created", {"referral_id": f"ref_{n}"}, occurred_at=when)
                for n in range(count)
            ],
        )


async def _rows(db: Database, sql: str, **params: Any) -> list[Any]:
    async with db.read() as conn:
        return list((await conn.execute(text(sql), params)).all())


def _worker(db: Database, clock: Any = None, **config: Any) -> DeliveryWorker:
    options: dict[str, Any] = {"clock": clock} if clock is not None else {}
    return DeliveryWorker(
        db,
        SecretBox(TEST_SECRET_KEY),
        WorkerConfig(retry_base_seconds=5, allow_loopback_targets=True, **config),
        rng=lambda: 0.5,
        **options,
    )


def test_hanging_endpoints_do_not_delay_another_partner(own_db: str) -> None:
    db_url = own_db
    hostile = onboard(db_url, name="Hostile")["partner_id"]
    good = onboard(db_url, name="Good")["partner_id"]
    hanging = HangingServer()
    fast = Receiver(behaviour=always(200)).start()

    async def scenario() -> tuple[list[float], int]:
        db = Database(db_url)
        for path in ("/a", "/b", "/c"):
            await _endpoint(db, hostile, hanging.url(path))
        good_endpoint = await _endpoint(db, good, fast.url)
        await _events(db, hostile, 100)  # 300 deliveries owed to hanging endpoints
        worker = _worker(db)
        task = asyncio.create_task(worker.run())
        try:
            await asyncio.sleep(1.0)  # the hanging endpoints take every slot they may
            for _ in range(20):
                await _events(db, good, 1)
                await asyncio.sleep(0.05)
            deadline = time.monotonic() + 10
            while True:  # until every attempt is recorded (it arrives a moment before)
                rows = await _rows(
                    db,
                    "SELECT d.created_at, min(a.attempted_at) AS first FROM deliveries d "
                    "LEFT JOIN delivery_attempts a ON a.delivery_id = d.id "
                    "WHERE d.endpoint_id = :e GROUP BY d.id, d.created_at",
                    e=good_endpoint,
                )
                if all(first for _, first in rows) or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.05)
            in_flight = await _rows(
                db,
                "SELECT count(*) FROM deliveries d JOIN events e ON e.id = d.event_id "
                "WHERE e.partner_id = :p AND d.claimed_by IS NOT NULL",
                p=hostile,
            )
        finally:
            task.cancel()  # the hanging sends would each take 15 s to time out
            with pytest.raises(asyncio.CancelledError):
                await task
            await worker.aclose()
            await db.dispose()
        waits = [
            (as_utc(_dt(first)) - as_utc(_dt(created))).total_seconds()
            for created, first in rows
            if first is not None
        ]
        assert len(waits) == len(rows) == 20, "every good delivery was attempted"
        return waits, int(in_flight[0][0])

    try:
        waits, hostile_in_flight = asyncio.run(scenario())
    finally:
        hanging.stop()
        fast.stop()
    assert max(waits) < 1.0, waits
    assert len(fast.received) == 20
    # the caps held: at most 8 per endpoint, 16 for the partner, never the worker's 32
    assert set(hanging.max_holding) == {"/a", "/b", "/c"}
    assert max(hanging.max_holding.values()) <= 8
    assert hostile_in_flight == 16


def _dt(value: Any) -> datetime:
    return datetime.fromisoformat(value) if isinstance(value, str) else value


def test_circuit_opens_backs_off_then_probes_one_at_a_time(own_db: str) -> None:
    db_url = own_db
    partner = onboard(db_url, name="Flaky")["partner_id"]
    status = {"code": 500}
    receiver = Receiver(behaviour=lambda _r, _i: (status["code"], {}, 0.0)).start()

    async def scenario() -> None:
        db = Database(db_url)
        clock = FakeClock(T0)
        worker = _worker(db, clock, endpoint_concurrency=FAILURES_TO_OPEN)
        scope = PartnerScope(partner, "test")
        try:
            endpoint = await _endpoint(db, partner, receiver.url)
            await _events(db, partner, 20, when=T0)
            assert await worker.run_once() == FAILURES_TO_OPEN  # the lane's cap
            async with db.read() as conn:
                record = await get_endpoint(conn, scope=scope, endpoint_id=endpoint, now=clock.now)
            assert record is not None
            assert record.health.circuit == "open"
            assert record.health.consecutive_failures == FAILURES_TO_OPEN
            # 15 deliveries of the event time are due, but the circuit is open: none claimed
            assert await worker.run_once() == 0
            clock.now = T0 + timedelta(seconds=31)
            assert len(await worker.claim()) == 1  # half-open: one probe at a time
            assert await worker.claim() == []
            clock.now = T0 + timedelta(seconds=200)  # that probe's lease is long gone
            status["code"] = 200
            assert await worker.run_once() == 1  # the probe succeeds: circuit closed
            async with db.read() as conn:
                record = await get_endpoint(conn, scope=scope, endpoint_id=endpoint, now=clock.now)
            assert record is not None and record.health.circuit == "closed"
            assert await worker.run_once() == FAILURES_TO_OPEN  # the full cap again
        finally:
            await worker.aclose()
            await db.dispose()

    try:
        asyncio.run(scenario())
    finally:
        receiver.stop()


def test_disabled_after_a_day_of_failures_partner_told_then_enabled(own_db: str) -> None:
    db_url = own_db
    partner = onboard(db_url, name="Dead")["partner_id"]
    receiver = Receiver(behaviour=always(503)).start()

    async def scenario() -> None:
        db = Database(db_url)
        clock = FakeClock(T0)
        worker = _worker(db, clock)
        scope = PartnerScope(partner, "test")
        try:
            async with db.write() as conn:
                await conn.execute(
                    text("UPDATE partners SET contact_email = :m WHERE id = :p"),
                    {"m": "ops@dead.example", "p": partner},
                )
            endpoint = await _endpoint(db, partner, receiver.url)
            await _events(db, partner, 10, when=T0)
            while await worker.run_once():  # fail until the circuit opens
                pass
            clock.now = T0 + DISABLE_AFTER - timedelta(seconds=1)
            await _events(db, partner, 3, when=clock.now)
            assert await worker.run_once() == 1  # a probe, failing: not disabled yet
            async with db.read() as conn:
                record = await get_endpoint(conn, scope=scope, endpoint_id=endpoint, now=clock.now)
            assert record is not None and record.status == "enabled"
            clock.now = T0 + DISABLE_AFTER + timedelta(minutes=20)
            assert await worker.run_once() == 1  # a day of nothing but failures
            async with db.read() as conn:
                record = await get_endpoint(conn, scope=scope, endpoint_id=endpoint, now=clock.now)
            assert record is not None
            assert record.status == "disabled" and record.disabled_reason == "failing"
            states = await _rows(
                db,
                "SELECT state, count(*) FROM deliveries WHERE endpoint_id = :e GROUP BY state",
                e=endpoint,
            )
            assert dict(states).get("pending", 0) == 0 and dict(states)["cancelled"] >= 2
            mail = await _rows(
                db,
                "SELECT channel, recipient, content FROM outbound_messages WHERE purpose = :p",
                p="webhook.endpoint_disabled",
            )
            assert len(mail) == 1 and mail[0][0] == "email"
            assert opened_recipient(mail[0][1]) == "ops@dead.example"  # sealed at rest
            assert endpoint in str(opened_content(mail[0][2]))
            await _events(db, partner, 1, when=clock.now)  # nothing is queued for it now
            assert dict(
                await _rows(
                    db,
                    "SELECT state, count(*) FROM deliveries WHERE endpoint_id = :e GROUP BY state",
                    e=endpoint,
                )
            ) == dict(states)
            async with db.write() as conn:
                enabled = await enable_endpoint(conn, scope=scope, endpoint_id=endpoint)
            assert enabled is not None and enabled.status == "enabled"
            assert enabled.health == EndpointHealth(
                circuit="closed",
                consecutive_failures=0,
                failing_since=None,
                circuit_open_until=None,
            )
            async with db.write() as conn:
                other = await enable_endpoint(
                    conn, scope=PartnerScope(partner, "live"), endpoint_id=endpoint
                )
            assert other is None  # another environment's key cannot touch it
        finally:
            await worker.aclose()
            await db.dispose()

    try:
        asyncio.run(scenario())
    finally:
        receiver.stop()


@pytest.fixture(scope="module")
def strict_trigger_server(db_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server with the trigger's defaults: 10/minute, registered endpoints only."""
    log_path = tmp_path_factory.mktemp("fair-logs") / "server.log"
    process = ServerProcess(
        db_url,
        Path(log_path),
        REHABREF_SANDBOX_TRIGGER_ORIGINS="",
        REHABREF_SANDBOX_TRIGGER_RATE_LIMIT="10/minute",
    ).start("--no-worker")
    yield process.base_url
    process.stop()


def test_delete_cancels_pending_deliveries_and_the_log_shows_them(
    db_url: str, strict_trigger_server: str
) -> None:
    made = onboard(db_url, name="Leaving")
    key = made["keys"]["sk_test"]
    with httpx.Client(base_url=strict_trigger_server, timeout=30) as http:
        endpoint = http.post(
            "/api/v1/partners/webhook-endpoints",
            json={"url": "http://127.0.0.1:9/gone"},
            headers=auth(key),
        ).json()
        assert endpoint["status"] == "enabled"
        assert endpoint["health"]["circuit"] == "closed"

        async def seed() -> None:
            db = Database(db_url)
            try:
                await _events(db, made["partner_id"], 3)
            finally:
                await db.dispose()

        asyncio.run(seed())
        deleted = http.delete(
            f"/api/v1/partners/webhook-endpoints/{endpoint['endpoint_id']}", headers=auth(key)
        )
        assert deleted.status_code == 204
        events = http.get("/api/v1/partners/events", headers=auth(key)).json()["data"]
        assert len(events) == 3
        for event in events:
            detail = http.get(f"/api/v1/partners/events/{event['event_id']}", headers=auth(key))
            (delivery,) = detail.json()["deliveries"]
            assert delivery["state"] == "cancelled" and delivery["completed_at"] is not None
            assert delivery["next_attempt_at"] is None
        again = http.post(
            f"/api/v1/partners/webhook-endpoints/{endpoint['endpoint_id']}/enable",
            headers=auth(key),
        )
        assert again.status_code == 404 and again.json()["error"]["code"] == "not_found"


def test_sandbox_trigger_is_limited_to_registered_endpoints_and_ten_a_minute(
    db_url: str, strict_trigger_server: str
) -> None:
    made = onboard(db_url, name="Trigger happy")
    key = made["keys"]["sk_test"]
    registered = "http://127.0.0.1:9/mine"
    with httpx.Client(base_url=strict_trigger_server, timeout=30) as http:

        def trigger(url: str) -> httpx.Response:
            return http.post(
                "/api/v1/sandbox/trigger-webhook",
                json={"event": "referral.created", "target_url": url},
                headers=auth(key),
            )

        refused = trigger("http://127.0.0.1:9/someone-else")
        assert refused.status_code == 422
        assert "registered" in refused.json()["error"]["fields"]["target_url"]
        http.post(
            "/api/v1/partners/webhook-endpoints", json={"url": registered}, headers=auth(key)
        ).raise_for_status()
        answers = [trigger(registered).status_code for _ in range(9)]
        assert answers == [202] * 9  # ten in the minute, the refused one included
        limited = trigger(registered)
        assert limited.status_code == 429
        assert limited.json()["error"]["code"] == "rate_limited"
        assert 1 <= int(limited.headers["Retry-After"]) <= 60
        # another key (another partner) has its own allowance
        other = onboard(db_url, name="Other")
        http.post(
            "/api/v1/partners/webhook-endpoints",
            json={"url": registered},
            headers=auth(other["keys"]["sk_test"]),
        ).raise_for_status()
        fine = http.post(
            "/api/v1/sandbox/trigger-webhook",
            json={"event": "referral.created", "target_url": registered},
            headers=auth(other["keys"]["sk_test"]),
        )
        assert fine.status_code == 202


def test_a_disabled_endpoint_shows_in_the_api_and_the_console(
    db_url: str, strict_trigger_server: str
) -> None:
    made = onboard(db_url, name="Shown")
    key = made["keys"]["sk_test"]
    operator = make_operator(db_url)
    with httpx.Client(base_url=strict_trigger_server, timeout=30) as http:
        endpoint = http.post(
            "/api/v1/partners/webhook-endpoints",
            json={"url": "http://127.0.0.1:9/shown"},
            headers=auth(key),
        ).json()

        async def disable() -> None:
            db = Database(db_url)
            try:
                async with db.write() as conn:
                    await conn.execute(
                        text(
                            "UPDATE webhook_endpoints SET disabled_at = :t, disabled_reason = "
                            "'failing', consecutive_failures = 40, failing_since = :s "
                            "WHERE id = :e"
                        ),
                        {"t": T0, "s": T0 - DISABLE_AFTER, "e": endpoint["endpoint_id"]},
                    )
            finally:
                await db.dispose()

        asyncio.run(disable())
        (listed,) = http.get("/api/v1/partners/webhook-endpoints", headers=auth(key)).json()["data"]
        assert listed["status"] == "disabled" and listed["disabled_reason"] == "failing"
        assert listed["disabled_at"].startswith("2026-11-24T08:00:00")
        assert listed["health"]["consecutive_failures"] == 40
        assert sign_in(http, operator["token"]).status_code == 303
        console = http.get("/console/deliveries")
        assert console.status_code == 200
        assert endpoint["endpoint_id"] in console.text and "disabled" in console.text
        assert "Shown" in console.text
        enabled = http.post(
            f"/api/v1/partners/webhook-endpoints/{endpoint['endpoint_id']}/enable",
            headers=auth(key),
        )
        assert enabled.status_code == 200 and enabled.json()["status"] == "enabled"
        assert endpoint["endpoint_id"] not in http.get("/console/deliveries").text


def test_claims_take_partners_in_turn_and_stop_at_the_partner_cap(own_db: str) -> None:
    db_url = own_db
    big = onboard(db_url, name="Big")["partner_id"]
    small = onboard(db_url, name="Small")["partner_id"]

    async def scenario() -> None:
        db = Database(db_url)
        clock = FakeClock(T0)
        worker = _worker(db, clock, endpoint_concurrency=4, partner_concurrency=10)
        try:
            for path in ("/1", "/2", "/3"):
                await _endpoint(db, big, f"http://127.0.0.1:9{path}")
            await _endpoint(db, small, "http://127.0.0.1:9/small")
            await _events(db, big, 50, when=T0)  # 150 deliveries, 3 lanes
            await _events(db, small, 50, when=T0 + timedelta(seconds=1))  # due later
            owner = {
                row[0]: row[1]
                for row in await _rows(
                    db,
                    "SELECT d.id, e.partner_id FROM deliveries d JOIN events e "
                    "ON e.id = d.event_id",
                )
            }
            clock.now = T0 + timedelta(seconds=2)
            first = [owner[item.id] for item in await worker.claim(4)]
            # in turn: two each, though all of big's are older
            assert sorted(first) == sorted([big, big, small, small])
            rest = [owner[item.id] for item in await worker.claim()]
            # big: 10 in flight at most (its 3 lanes could take 12); small: its lane's 4
            assert first.count(big) + rest.count(big) == 10
            assert first.count(small) + rest.count(small) == 4
            assert await worker.claim() == []
        finally:
            await worker.aclose()
            await db.dispose()

    asyncio.run(scenario())
