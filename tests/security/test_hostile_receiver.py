"""A hostile webhook receiver must not stall the delivery worker.

Deliveries are claimed in batches across partners and their attempts are written in one
transaction, so anything one receiver sends back that cannot be stored or parsed would fail
the whole batch, every retry, and hold up every other partner's webhooks.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from rehabref.db import Database
from rehabref.events.outbox import NewEvent, record_events
from rehabref.events.sealing import opened_excerpt
from rehabref.events.worker import DeliveryWorker, WorkerConfig
from rehabref.instance_secret import SecretBox
from tests.support.databases import fresh_database
from tests.support.partners import TEST_RING, TEST_SECRET_KEY, onboard
from tests.support.receiver import Receiver, always
from tests.support.server import free_port

T0 = datetime(2026, 11, 22, 8, 0, tzinfo=UTC)


class Hostile:
    """Answers every POST with a fixed status, headers and raw body bytes."""

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.port = free_port()
        answer = (status, headers, body)

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, headers, body = answer
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)  # latin-1 on the wire
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def db_url(tmp_path: Path) -> Iterator[str]:
    with fresh_database(tmp_path) as url:
        yield url


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
    return str(event_id)


async def _state(db: Database, event_id: str) -> tuple[str, int, Any]:
    async with db.read() as conn:
        row = (
            await conn.execute(
                text(
                    "SELECT d.state, d.attempt_count, a.response_excerpt FROM deliveries d "
                    "LEFT JOIN delivery_attempts a ON a.delivery_id = d.id WHERE d.event_id = :e"
                ),
                {"e": event_id},
            )
        ).one()
    return str(row[0]), int(row[1]), opened_excerpt(TEST_RING, row[2])


@pytest.mark.parametrize(
    ("status", "headers", "body"),
    [
        (200, {"Content-Type": "text/plain"}, b"ok\x00\x00 then more"),
        (500, {"Content-Type": "text/plain"}, b"\x00" * 2000),
        (429, {"Retry-After": "\u00b2"}, b"slow down"),
        (503, {"Retry-After": "\u00b9\u00b2\u00b3"}, b""),
    ],
)
def test_hostile_answer_is_recorded_and_others_still_delivered(
    db_url: str, status: int, headers: dict[str, str], body: bytes
) -> None:
    hostile_partner = onboard(db_url, name="Hostile")
    good_partner = onboard(db_url, name="Good")
    hostile = Hostile(status, headers, body)
    good = Receiver(behaviour=always(200)).start()

    async def scenario() -> tuple[tuple[str, int, Any], tuple[str, int, Any]]:
        db = Database(db_url)
        worker = DeliveryWorker(
            db,
            SecretBox(TEST_SECRET_KEY),
            WorkerConfig(retry_base_seconds=5, allow_loopback_targets=True),
            clock=lambda: T0,
            rng=lambda: 0.5,
        )
        try:
            bad_event = await _seed(db, hostile_partner["partner_id"], hostile.url)
            good_event = await _seed(db, good_partner["partner_id"], good.url)
            assert await worker.run_once() == 2  # one batch holds both
            return await _state(db, bad_event), await _state(db, good_event)
        finally:
            await worker.aclose()
            await db.dispose()

    try:
        bad, fine = asyncio.run(scenario())
    finally:
        hostile.stop()
        good.stop()
    assert fine[:2] == ("succeeded", 1)
    assert bad[1] == 1
    assert bad[0] == ("succeeded" if status == 200 else "pending")
    if body:
        assert bad[2] is not None and "\x00" not in bad[2]
