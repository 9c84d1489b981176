"""Intake -> match under load, on PostgreSQL (issue 22: the spec's 15-minute ceiling, automatic
matches under 1 s).

1. Fresh database, the realistic 200-physiotherapist registry (tests/matching/data/physios.csv)
   imported as live physiotherapists, every one publishing weekly availability (so matching
   runs its availability filter), ``rehabref serve --workers 2 --no-worker``.
2. N live referrals (route ``assistant``) in Lagos, each walked through the hosted intake form
   up to its last step (not timed).
3. The N last answers ("confirm") are sent ``--concurrency`` at a time. Matching runs inside
   that request's transaction, so the intake-to-match time of a patient is the latency of that
   request; it is read back from the database too (``patient.intake_completed`` ->
   ``provider.matched`` occurred_at) to show the two events commit together.

Usage: ``python -m bench.matching [--referrals N] [--concurrency C]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from bench.environment import free_port, fresh_database, onboard, percentile, serve_api

REGISTRY_CSV = Path(__file__).resolve().parent.parent / "tests/matching/data/physios.csv"
FORM_TOKEN = re.compile(r'name="form_token" value="([^"]+)"')
AREAS = ("Yaba", "Ikeja", "Lekki", "Surulere", "Ajah", "Ikorodu", "Festac", "Maryland")
MODES = ("mode:home_visit", "mode:remote", "mode:in_clinic")


def _next_answer(page: str, index: int) -> dict[str, Any] | None:
    """What this patient answers to the page shown (None at the last step, "confirm").
    Patients are spread over Lagos areas and care modes, as real ones are."""
    if 'value="confirm:yes"' in page:
        return None
    if 'name="text"' in page:
        return {"text": AREAS[index % len(AREAS)]}
    if 'value="slot:weekday_mornings"' in page:
        return {"choice": ["slot:weekday_mornings", "slot:weekends"]}
    mode = MODES[index % len(MODES)]
    for choice in ("lang:en", "consent:yes", mode):
        if f'value="{choice}"' in page:
            return {"choice": [choice]}
    raise RuntimeError(f"an intake page this bench does not know: {page[:300]}")


LAST_STEP = {"choice": ["confirm:yes"]}  # the timed request
WEEK = [{"weekday": day, "start": "08:00", "end": "17:00"} for day in range(6)]


def _cli(env: dict[str, str], *argv: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "rehabref.cli", *argv],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def _referral(index: int) -> dict[str, Any]:
    return {
        "external_ref": f"MATCH-BENCH-{index:05d}",
        "route": "assistant",
        "care_mode": "either",
        "patient": {"first_name": "Amaka", "phone": "+2348031234567", "city": "Lagos"},
        "reason": ["Lower back pain", "Post-op knee", "Ankle sprain", "Stroke rehab"][index % 4],
        "preferred_contact": "messaging",
        "consent": {
            "accepted": True,
            "accepted_at": "2026-11-20T09:30:00Z",
            "version": "2026-01",
            "source": "bench",
        },
    }


async def _post(http: httpx.AsyncClient, path: str, page: str, answer: dict[str, Any]) -> None:
    found = FORM_TOKEN.search(page)
    if found is None:
        raise RuntimeError(f"no form on {path}")
    response = await http.post(path, data={"form_token": found.group(1), **answer})
    if response.status_code not in (200, 303):
        raise RuntimeError(f"answer refused: {response.status_code} {response.text[:200]}")


async def _prepare(http: httpx.AsyncClient, key: str, index: int) -> str:
    created = await http.post(
        "/api/v1/partners/referrals",
        json=_referral(index),
        headers={"Authorization": f"Bearer {key}", "Idempotency-Key": f"match-bench-{index}"},
    )
    created.raise_for_status()
    path: str = urlsplit(created.json()["assistant_session_url"]).path
    while (answer := _next_answer((page := (await http.get(path)).text), index)) is not None:
        await _post(http, path, page, answer)
    return path


async def _run(base_url: str, key: str, referrals: int, concurrency: int) -> list[float]:
    limits = httpx.Limits(max_connections=concurrency)
    async with httpx.AsyncClient(base_url=base_url, timeout=60, limits=limits) as http:
        paths = []
        for start in range(0, referrals, concurrency):
            batch = range(start, min(referrals, start + concurrency))
            paths += await asyncio.gather(*(_prepare(http, key, i) for i in batch))
        gate = asyncio.Semaphore(concurrency)
        latencies: list[float] = []

        async def confirm(path: str) -> None:
            async with gate:
                page = (await http.get(path)).text
                started = time.perf_counter()
                await _post(http, path, page, LAST_STEP)
                latencies.append(time.perf_counter() - started)

        await asyncio.gather(*(confirm(path) for path in paths))
    return latencies


async def _outcome(url: str) -> dict[str, Any]:
    from sqlalchemy import text

    from rehabref.clock import as_utc
    from rehabref.db import Database

    db = Database(url, pool_size=1)
    try:
        async with db.read() as conn:
            rows = (
                await conn.execute(
                    text(
                        "SELECT c.occurred_at, m.occurred_at FROM events c "
                        "LEFT JOIN events m ON m.referral_id = c.referral_id "
                        "AND m.type = 'provider.matched' "
                        "WHERE c.type = 'patient.intake_completed'"
                    )
                )
            ).all()
            unmatched = (
                await conn.execute(
                    text("SELECT count(*) FROM contact_tasks WHERE purpose = 'unmatched'")
                )
            ).scalar_one()
    finally:
        await db.dispose()
    gaps = [(as_utc(m) - as_utc(c)).total_seconds() for c, m in rows if m is not None]
    return {
        "intake_completed": len(rows),
        "matched": len(gaps),
        "unmatched_tasks": unmatched,
        "max_event_gap_s": max(gaps, default=0.0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--referrals", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rehabref-bench-matching-"))
    port = free_port()
    with fresh_database("postgres", work) as url:
        partner = onboard(url, name="Matching bench")
        env = {
            **os.environ,
            "REHABREF_DATABASE_URL": url,
            "REHABREF_RATE_LIMIT": "100000/second",
            "REHABREF_PAGE_RATE_LIMIT_IP": "1000000/minute",
            "REHABREF_FORM_RATE_LIMIT_IP": "1000000/minute",
            "REHABREF_LOG_LEVEL": "WARNING",
        }
        _cli(env, "physios", "import", str(REGISTRY_CSV))
        token = json.loads(_cli(env, "operators", "create", "--name", "bench", "--json"))["token"]
        server = serve_api(env, port, work / "api.log")
        try:
            with httpx.Client(
                base_url=f"http://127.0.0.1:{port}",
                headers={"Authorization": f"Bearer {token}"},
                timeout=30,
            ) as ops:
                physios = ops.get("/api/v1/ops/physiotherapists", params={"limit": 100})
                listed, cursor = physios.json()["data"], physios.json()["next_cursor"]
                while cursor:
                    page = ops.get(
                        "/api/v1/ops/physiotherapists", params={"limit": 100, "cursor": cursor}
                    ).json()
                    listed, cursor = listed + page["data"], page["next_cursor"]
                for physio in listed:
                    ops.put(
                        f"/api/v1/ops/physiotherapists/{physio['physio_id']}/availability",
                        json={"windows": WEEK},
                    ).raise_for_status()
            latencies = asyncio.run(
                _run(
                    f"http://127.0.0.1:{port}",
                    partner["keys"]["sk_live"],
                    args.referrals,
                    args.concurrency,
                )
            )
        finally:
            server.terminate()
            server.wait(timeout=30)
        outcome = asyncio.run(_outcome(url))
    print(
        f"intake -> match, PostgreSQL, 2 API processes, {len(listed)} physiotherapists with "
        f"availability, {args.referrals} patients confirming {args.concurrency} at a time:"
    )
    print(
        f"  p50 {statistics.median(latencies) * 1000:.1f} ms, "
        f"p99 {percentile(latencies, 0.99) * 1000:.1f} ms, "
        f"max {max(latencies) * 1000:.1f} ms"
    )
    print(
        f"  {outcome['matched']} of {outcome['intake_completed']} matched automatically, "
        f"{outcome['unmatched_tasks']} left to a coordinator; provider.matched after "
        f"patient.intake_completed by at most {outcome['max_event_gap_s'] * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main()
