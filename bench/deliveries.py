"""Webhook delivery benchmark on PostgreSQL: deliveries/s with 1 and 2 workers, and latency.

1. Fresh database, one partner, one webhook endpoint at a local receiver (uvicorn, raw ASGI,
   answers 200 and notes when each event id arrived).
2. Throughput: seed N pending deliveries, start 1 (then 2) ``rehabref worker`` processes,
   rate = deliveries between the first and the last arrival / that time.
3. Latency at low load: one worker running; commit one event every 20 ms (50/s) and measure
   commit -> receiver arrival; print p50/p99.

Usage: ``python -m bench.deliveries [--events N] [--latency-events M]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench.environment import free_port, fresh_database, key_ring, onboard

# ---------------------------------------------------------------------------- the receiver

_arrivals: dict[str, float] = {}


async def receiver_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    more = True
    while more:
        message = await receive()
        more = message.get("more_body", False)
    if scope["method"] == "GET":
        body = json.dumps(_arrivals).encode()
    else:
        now = time.time()
        for name, value in scope["headers"]:
            if name == b"x-service-event-id":
                _arrivals.setdefault(value.decode(), now)
        body = b"ok"
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": body})


# ---------------------------------------------------------------------------- the driver


def _start_receiver(port: int, log: Path) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-m",
        "uvicorn",
        "bench.deliveries:receiver_app",
        "--port",
        str(port),
        "--loop",
        "uvloop",
        "--http",
        "httptools",
        "--no-access-log",
        "--log-level",
        "warning",
    ]
    process = subprocess.Popen(command, stdout=log.open("ab"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
            return process
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError("receiver did not start")


def _arrived(port: int) -> dict[str, float]:
    return dict(httpx.get(f"http://127.0.0.1:{port}/", timeout=30).json())


async def _seed(url: str, partner_id: str, count: int) -> list[str]:
    from rehabref.db import Database
    from rehabref.events.outbox import NewEvent, record_events

    db = Database(url, pool_size=2)
    ring = key_ring(url)
    ids: list[str] = []
    try:
        for start in range(0, count, 500):
            events = [
                NewEvent("referral.created", {"referral_id": f"ref_{i}", "status": "received"})
                for i in range(start, min(start + 500, count))
            ]
            async with db.write() as conn:
                ids += await record_events(
                    conn, ring, partner_id=partner_id, environment="test", events=events
                )
    finally:
        await db.dispose()
    return ids


async def _register(url: str, partner_id: str, target: str) -> None:
    from rehabref.db import Database
    from rehabref.events.subscriptions import create_endpoint
    from rehabref.scope import PartnerScope

    db = Database(url, pool_size=1)
    try:
        async with db.write() as conn:
            await create_endpoint(
                conn, scope=PartnerScope(partner_id, "test"), url=target, enabled_events=None
            )
    finally:
        await db.dispose()


async def _trickle(url: str, partner_id: str, count: int, gap: float) -> dict[str, float]:
    from rehabref.db import Database
    from rehabref.events.outbox import NewEvent, record_events

    db = Database(url, pool_size=2)
    ring = key_ring(url)
    committed: dict[str, float] = {}
    try:
        for i in range(count):
            async with db.write() as conn:
                (event_id,) = await record_events(
                    conn,
                    ring,
                    partner_id=partner_id,
                    environment="test",
                    events=[NewEvent("referral.created", {"referral_id": f"ref_l{i}"})],
                )
            committed[event_id] = time.time()
            await asyncio.sleep(gap)
    finally:
        await db.dispose()
    return committed


def _workers(n: int, env: dict[str, str], log: Path) -> list[subprocess.Popen[bytes]]:
    return [
        subprocess.Popen(
            [sys.executable, "-m", "rehabref.cli", "worker"],
            env=env,
            stdout=log.open("ab"),
            stderr=subprocess.STDOUT,
        )
        for _ in range(n)
    ]


def _stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


def _wait_all(port: int, ids: list[str], timeout: float = 300) -> dict[str, float]:
    deadline = time.monotonic() + timeout
    while True:
        arrived = _arrived(port)
        if all(event_id in arrived for event_id in ids):
            return arrived
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {sum(e in arrived for e in ids)} of {len(ids)} arrived")
        time.sleep(0.25)


def _throughput(
    url: str,
    partner_id: str,
    port: int,
    n_events: int,
    workers: int,
    env: dict[str, str],
    log: Path,
) -> float:
    ids = asyncio.run(_seed(url, partner_id, n_events))
    processes = _workers(workers, env, log)
    try:
        arrived = _wait_all(port, ids)
    finally:
        _stop(processes)
    times = sorted(arrived[event_id] for event_id in ids)
    return (len(times) - 1) / max(times[-1] - times[0], 1e-9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--latency-events", type=int, default=200)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rehabref-bench-deliveries-"))
    port = free_port()
    receiver = _start_receiver(port, work / "receiver.log")
    try:
        with fresh_database("postgres", work) as url:
            partner = onboard(url)
            partner_id = partner["partner_id"]
            asyncio.run(_register(url, partner_id, f"http://127.0.0.1:{port}/hooks"))
            env = {
                **os.environ,
                "REHABREF_DATABASE_URL": url,
                "REHABREF_ALLOW_LOOPBACK_WEBHOOK_TARGETS": "true",
                "REHABREF_LOG_LEVEL": "WARNING",
            }
            log = work / "workers.log"
            one = _throughput(url, partner_id, port, args.events, 1, env, log)
            two = _throughput(url, partner_id, port, args.events, 2, env, log)
            processes = _workers(1, env, log)
            try:
                time.sleep(2)  # worker started and idle
                committed = asyncio.run(_trickle(url, partner_id, args.latency_events, 0.02))
                arrived = _wait_all(port, list(committed))
            finally:
                _stop(processes)
            latencies = sorted((arrived[e] - t) * 1000 for e, t in committed.items())
            p50 = statistics.median(latencies)
            p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    finally:
        receiver.terminate()
        receiver.wait(timeout=10)
    result = {
        "events": args.events,
        "deliveries_per_s_1_worker": round(one),
        "deliveries_per_s_2_workers": round(two),
        "latency_events": args.latency_events,
        "latency_p50_ms": round(p50, 1),
        "latency_p99_ms": round(p99, 1),
    }
    print(json.dumps(result, indent=2))
    print(f"logs: {work}", file=sys.stderr)


if __name__ == "__main__":
    main()
