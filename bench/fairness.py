"""Fair webhook delivery benchmark on PostgreSQL: a hostile partner cannot slow another's.

1. Fresh database; ``rehabref serve --workers 2 --no-worker`` (two API processes) and one
   ``rehabref worker``. A hanging server (accepts, reads, never answers) and a fast receiver
   (``bench.deliveries.receiver_app``) on loopback.
2. The hostile partner registers 3 endpoints on the hanging server and is owed 1,000
   deliveries (334 events, each to its 3 endpoints) before the worker starts.
3. The well-behaved partner registers one endpoint at the fast receiver and creates
   referrals through the API (``--referrals``, one every 50 ms); each ``referral.created``
   is a delivery. Latency: the create's answer -> the receiver's arrival (p50, p99, max).
   Unattempted wait: for each of its deliveries, created -> first attempt, from the log;
   ``max_unattempted_wait_s`` is the longest, and ``never_attempted`` counts the ones
   still without an attempt at the end (the issue's measure: one waited 194 s).

Usage: ``python -m bench.fairness [--referrals N] [--owed N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from bench.deliveries import _arrived, _start_receiver, _stop, _workers
from bench.environment import free_port, fresh_database, key_ring, onboard, percentile, serve_api


class HangingServer:
    """Holds every connection open without answering (the worst receiver there is)."""

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(1024)
        self.port = int(self._sock.getsockname()[1])
        self.accepted = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._hold, args=(conn,), daemon=True).start()

    @staticmethod
    def _hold(conn: socket.socket) -> None:
        try:
            while conn.recv(4096):
                pass
        except OSError:
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self._sock.close()


def _register(http: httpx.Client, key: str, url: str) -> str:
    response = http.post(
        "/api/v1/partners/webhook-endpoints",
        json={"url": url},
        headers={"Authorization": f"Bearer {key}"},
    )
    response.raise_for_status()
    return str(response.json()["endpoint_id"])


async def _owe(url: str, partner_id: str, count: int) -> None:
    from rehabref.db import Database
    from rehabref.events.outbox import NewEvent, record_events

    db = Database(url, pool_size=1)
    try:
        events = [
            NewEvent("referral.created", {"referral_id": f"ref_h{i}", "status": "received"})
            for i in range(count)
        ]
        async with db.write() as conn:
            await record_events(
                conn, key_ring(url), partner_id=partner_id, environment="test", events=events
            )
    finally:
        await db.dispose()


def _referral(ref: str) -> dict[str, Any]:
    return {
        "external_ref": ref,
        "patient": {"first_name": "Amaka", "phone": "+2348031234567", "city": "Lagos"},
        "reason": "Lower back pain",
        "care_mode": "either",
        "preferred_contact": "messaging",
        "route": "contact",
        "consent": {
            "accepted": True,
            "accepted_at": "2026-11-20T09:30:00Z",
            "version": "2026-01",
            "source": "bench",
        },
    }


async def _waits(url: str, endpoint_id: str) -> tuple[list[float], int]:
    from sqlalchemy import text

    from rehabref.clock import as_utc
    from rehabref.db import Database

    db = Database(url, pool_size=1)
    try:
        async with db.read() as conn:
            rows = (
                await conn.execute(
                    text(
                        "SELECT d.created_at, min(a.attempted_at) FROM deliveries d "
                        "LEFT JOIN delivery_attempts a ON a.delivery_id = d.id "
                        "WHERE d.endpoint_id = :e GROUP BY d.id, d.created_at"
                    ),
                    {"e": endpoint_id},
                )
            ).all()
    finally:
        await db.dispose()
    waits = [(as_utc(first) - as_utc(created)).total_seconds() for created, first in rows if first]
    return waits, sum(1 for _, first in rows if first is None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--referrals", type=int, default=300)
    parser.add_argument("--owed", type=int, default=1000)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rehabref-bench-fairness-"))
    hanging = HangingServer()
    receiver_port, api_port = free_port(), free_port()
    receiver = _start_receiver(receiver_port, work / "receiver.log")
    processes: list[subprocess.Popen[bytes]] = []
    try:
        with fresh_database("postgres", work) as url:
            hostile = onboard(url, name="Hostile")
            good = onboard(url, name="Well-behaved")
            env = {
                **os.environ,
                "REHABREF_DATABASE_URL": url,
                "REHABREF_ALLOW_LOOPBACK_WEBHOOK_TARGETS": "true",
                "REHABREF_RATE_LIMIT": "100000/second",
                "REHABREF_LOG_LEVEL": "WARNING",
            }
            processes.append(serve_api(env, api_port, work / "api.log"))
            with httpx.Client(base_url=f"http://127.0.0.1:{api_port}", timeout=30) as http:
                for path in ("/a", "/b", "/c"):
                    _register(
                        http, hostile["keys"]["sk_test"], f"http://127.0.0.1:{hanging.port}{path}"
                    )
                good_endpoint = _register(
                    http, good["keys"]["sk_test"], f"http://127.0.0.1:{receiver_port}/hooks"
                )
                asyncio.run(_owe(url, hostile["partner_id"], -(-args.owed // 3)))
                processes += _workers(1, env, work / "worker.log")
                time.sleep(3)  # the worker has taken every slot the hostile partner may have
                committed: dict[str, float] = {}
                for i in range(args.referrals):
                    ref = f"FAIR-{uuid.uuid4().hex[:12]}-{i}"
                    response = http.post(
                        "/api/v1/partners/referrals",
                        json=_referral(ref),
                        headers={
                            "Authorization": f"Bearer {good['keys']['sk_test']}",
                            "Idempotency-Key": ref,
                        },
                    )
                    response.raise_for_status()
                    committed[response.json()["referral_id"]] = time.time()
                    time.sleep(0.05)
                deadline = time.monotonic() + 60
                while len(_arrived(receiver_port)) < len(committed):
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.25)
                arrived = _arrived(receiver_port)
            waits, never = asyncio.run(_waits(url, good_endpoint))
            event_times = asyncio.run(_event_referrals(url, list(arrived)))
    finally:
        _stop(processes)
        receiver.terminate()
        receiver.wait(timeout=10)
        hanging.close()
    latencies = [
        arrived[event_id] - committed[referral_id]
        for event_id, referral_id in event_times.items()
        if referral_id in committed
    ]
    result = {
        "hostile_endpoints": 3,
        "hostile_owed_deliveries": -(-args.owed // 3) * 3,
        "hostile_connections_accepted": hanging.accepted,
        "good_referrals": args.referrals,
        "good_created_events_delivered": len(latencies),
        "good_deliveries_attempted": len(waits),
        "good_latency_p50_s": round(statistics.median(latencies), 3),
        "good_latency_p99_s": round(percentile(latencies, 0.99), 3),
        "good_latency_max_s": round(max(latencies), 3),
        "max_unattempted_wait_s": round(max(waits), 3),
        "never_attempted": never,
    }
    print(json.dumps(result, indent=2))
    print(f"logs: {work}", file=sys.stderr)


async def _event_referrals(url: str, event_ids: list[str]) -> dict[str, str]:
    from sqlalchemy import bindparam, text

    from rehabref.db import Database

    db = Database(url, pool_size=1)
    try:
        async with db.read() as conn:
            rows = await conn.execute(
                text(
                    "SELECT id, referral_id FROM events "
                    "WHERE id IN :ids AND type = 'referral.created'"
                ).bindparams(bindparam("ids", expanding=True)),
                {"ids": event_ids},
            )
            return {str(event_id): str(referral_id) for event_id, referral_id in rows}
    finally:
        await db.dispose()


if __name__ == "__main__":
    main()
