"""Patient message benchmark on PostgreSQL, against a WhatsApp Cloud API stand-in that answers
every send after 50 ms.

1. Throughput: seed N pending live messages to N patients, start one ``rehabref worker``,
   rate = messages between the first and the last arrival at the stand-in / that time.
2. Latency: one ``rehabref serve`` (worker in-process) with live keys; create a V1 referral
   (``route: assistant``, ``preferred_contact: messaging``) every 100 ms and measure the
   create's answer -> the first message's arrival at the stand-in (p50/p99).

Usage: ``python -m bench.messages [--messages N] [--referrals M]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench.environment import free_port, fresh_database, key_ring, onboard, percentile

PROVIDER_LATENCY_SECONDS = 0.05
PHONE_NUMBER_ID = "106540352242922"
TOKEN = "bench-token"

# ---------------------------------------------------------------------------- the stand-in

_arrivals: dict[str, float] = {}


async def graph_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """``POST /v21.0/{phone_number_id}/messages``: 50 ms, then Meta's success answer."""
    if scope["type"] != "http":
        return
    chunks = []
    more = True
    while more:
        message = await receive()
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    if scope["method"] == "GET":
        body = json.dumps(_arrivals).encode()
    else:
        payload = json.loads(b"".join(chunks))
        await asyncio.sleep(PROVIDER_LATENCY_SECONDS)
        _arrivals.setdefault(payload["to"], time.time())
        wamid = "wamid." + secrets.token_urlsafe(24)
        body = json.dumps(
            {
                "messaging_product": "whatsapp",
                "contacts": [{"input": payload["to"], "wa_id": payload["to"]}],
                "messages": [{"id": wamid}],
            }
        ).encode()
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _start(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(command, env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT)


def _wait_up(url: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not come up")


def _arrived(port: int) -> dict[str, float]:
    return dict(httpx.get(f"http://127.0.0.1:{port}/", timeout=30).json())


def _stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


def _phones(count: int) -> list[str]:
    return [f"+234803{n:07d}" for n in random.sample(range(10_000_000), count)]


async def _seed(url: str, phones: list[str]) -> None:
    from rehabref.channels.content import Reply
    from rehabref.channels.outbox import enqueue
    from rehabref.clock import utcnow
    from rehabref.db import Database

    # Sealed under the server's key ring, as the server writes them (it opens them to send).
    ring = key_ring(url)
    db = Database(url, pool_size=2)
    try:
        for start in range(0, len(phones), 500):
            async with db.write() as conn:
                for phone in phones[start : start + 500]:
                    await enqueue(
                        conn,
                        ring,
                        channel="whatsapp",
                        to=phone,
                        content=Reply("Which area do you live in?"),
                        purpose="bench",
                        environment="live",
                        referral_id=None,
                        now=utcnow(),
                    )
    finally:
        await db.dispose()


def _wait_all(port: int, phones: list[str], timeout: float = 600) -> dict[str, float]:
    deadline = time.monotonic() + timeout
    digits = [phone[1:] for phone in phones]
    while True:
        arrived = _arrived(port)
        if all(d in arrived for d in digits):
            return {d: arrived[d] for d in digits}
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {sum(d in arrived for d in digits)} of {len(digits)}")
        time.sleep(0.25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--referrals", type=int, default=200)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rehabref-bench-messages-"))
    graph_port, api_port = free_port(), free_port()
    graph = _start(
        [sys.executable, "-m", "uvicorn", "bench.messages:graph_app", "--port", str(graph_port),
         "--loop", "uvloop", "--http", "httptools", "--no-access-log", "--log-level", "warning"],
        dict(os.environ),
        work / "graph.log",
    )  # fmt: skip
    try:
        _wait_up(f"http://127.0.0.1:{graph_port}/")
        with fresh_database("postgres", work) as url:
            partner = onboard(url)
            env = {
                **os.environ,
                "REHABREF_DATABASE_URL": url,
                "REHABREF_LOG_LEVEL": "WARNING",
                "REHABREF_HOST": "127.0.0.1",
                "REHABREF_PORT": str(api_port),
                "REHABREF_RATE_LIMIT": "100000/second",
                "REHABREF_WHATSAPP_API_BASE": f"http://127.0.0.1:{graph_port}/v21.0",
                "REHABREF_WHATSAPP_ACCESS_TOKEN": TOKEN,
                "REHABREF_WHATSAPP_PHONE_NUMBER_ID": PHONE_NUMBER_ID,
                "REHABREF_WHATSAPP_APP_SECRET": "bench-app-secret",
            }
            phones = _phones(args.messages)
            asyncio.run(_seed(url, phones))
            worker = _start([sys.executable, "-m", "rehabref.cli", "worker"], env, work / "w.log")
            try:
                times = sorted(_wait_all(graph_port, phones).values())
            finally:
                _stop([worker])
            per_second = (len(times) - 1) / max(times[-1] - times[0], 1e-9)

            server = _start(
                [sys.executable, "-m", "rehabref.cli", "serve", "--workers", "1"],
                env,
                work / "serve.log",
            )
            latencies: list[float] = []
            try:
                _wait_up(f"http://127.0.0.1:{api_port}/readyz")
                key = partner["keys"]["sk_live"]
                answered: dict[str, float] = {}
                referral_phones = _phones(args.referrals)
                with httpx.Client(base_url=f"http://127.0.0.1:{api_port}", timeout=30) as client:
                    for phone in referral_phones:
                        body = {
                            "external_ref": f"BENCH-{secrets.token_hex(6)}",
                            "patient": {"first_name": "Ada", "phone": phone, "city": "Lagos"},
                            "reason": "Knee pain after a fall",
                            "care_mode": "either",
                            "preferred_contact": "messaging",
                            "route": "assistant",
                            "consent": {"accepted": True, "accepted_at": "2026-11-20T09:30:00Z",
                                        "version": "1", "source": "clinic_form"},
                        }  # fmt: skip
                        response = client.post(
                            "/api/v1/partners/referrals",
                            json=body,
                            headers={
                                "Authorization": f"Bearer {key}",
                                "Idempotency-Key": secrets.token_hex(8),
                            },
                        )
                        response.raise_for_status()
                        answered[phone[1:]] = time.time()
                        time.sleep(0.1)
                    arrived = _wait_all(graph_port, referral_phones)
                latencies = [(arrived[d] - answered[d]) * 1000 for d in answered]
            finally:
                _stop([server])
    finally:
        _stop([graph])
    result = {
        "provider_latency_ms": PROVIDER_LATENCY_SECONDS * 1000,
        "messages": args.messages,
        "messages_per_s_1_worker": round(per_second, 1),
        "referrals": args.referrals,
        "create_to_first_message_p50_ms": round(statistics.median(latencies), 1),
        "create_to_first_message_p99_ms": round(percentile(latencies, 0.99), 1),
    }
    print(json.dumps(result, indent=2))
    print(f"logs: {work}", file=sys.stderr)


if __name__ == "__main__":
    main()
