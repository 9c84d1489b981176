"""Reproducible API benchmark: rehabref vs a bare Starlette JSON endpoint, in one run.

For PostgreSQL, then SQLite: start a fresh database and a real server (uvicorn, uvloop,
httptools; one worker per core on PostgreSQL, one process on SQLite), start the yardstick on
the same settings, drive both with wrk from a separate process, and print throughput, p50/p99
latency and the ratios create/bare and get/bare. Usage: ``python -m bench.run [--seconds N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg

from bench.environment import free_port, fresh_database, onboard
from bench.reference_insert import create_table as create_reference_table

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


@dataclass
class Measurement:
    name: str
    connections: int
    requests_per_s: float
    p50_ms: float
    p99_ms: float
    errors: int


def uvicorn_flags(workers: int) -> list[str]:
    """The settings `rehabref serve` passes to uvicorn (it trusts no X-Forwarded-* headers)."""
    return [
        "--loop",
        "uvloop",
        "--http",
        "httptools",
        "--no-proxy-headers",
        "--no-access-log",
        "--workers",
        str(workers),
        "--log-level",
        "warning",
    ]


def bench_env() -> dict[str, str]:
    """This environment, with the bench package importable by the servers it starts."""
    pythonpath = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(HERE.parent)]))
    return {**os.environ, "PYTHONPATH": pythonpath}


def app_server(url: str, port: int, workers: int) -> tuple[list[str], dict[str, str]]:
    """Command and environment of the real application server on ``url``."""
    env = {
        **bench_env(),
        "REHABREF_DATABASE_URL": url,
        "REHABREF_RATE_LIMIT": "10000000/second",
        "REHABREF_PORT": str(port),
    }
    argv = [
        sys.executable,
        "-m",
        "uvicorn",
        "--factory",
        "rehabref.app:asgi_app",
        "--port",
        str(port),
        *uvicorn_flags(workers),
    ]
    return argv, env


@contextmanager
def serve(
    argv: list[str], env: dict[str, str], ready_path: str, port: int, ok: tuple[int, ...] = (200,)
) -> Iterator[str]:
    log = (RESULTS / f"server-{port}.log").open("wb")
    process = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"server exited, see {log.name}")
            try:
                if httpx.get(base + ready_path, timeout=1).status_code in ok:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("server did not start")
            time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def wrk(
    name: str,
    base: str,
    script: str,
    args: list[str],
    connections: int,
    seconds: int,
    *,
    warm_up: int = 3,
) -> Measurement:
    """``warm_up`` seconds of the same load first, not measured: connection pools fill,
    prepared statements and caches warm, as on a server that has been up a while."""
    if warm_up:
        wrk_counts(base, script, args, connections, warm_up)
    data = wrk_counts(base, script, args, connections, seconds)
    errors = sum(data[k] for k in data if k.startswith("errors_")) + data["non_2xx"]
    return Measurement(
        name=name,
        connections=connections,
        requests_per_s=data["requests"] / (data["duration_us"] / 1e6),
        p50_ms=data["p50_us"] / 1000,
        p99_ms=data["p99_us"] / 1000,
        errors=errors,
    )


def wrk_counts(
    base: str, script: str, args: list[str], connections: int, seconds: int
) -> dict[str, int]:
    """One wrk run of ``script`` against ``base``: its raw counts (``report.lua``)."""
    combined = RESULTS / f"{script}.combined.lua"
    combined.write_text((HERE / script).read_text() + "\n" + (HERE / "report.lua").read_text())
    path = {"bare.lua": "/ping", "reference_insert.lua": "/items"}.get(script, "/")
    command = [
        "wrk",
        "-t2",
        f"-c{connections}",
        f"-d{seconds}s",
        "--timeout",
        "5s",
        "-s",
        str(combined),
        base + path,
    ]
    if args:
        command += ["--", *args]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    match = re.search(r"BENCH_JSON (\{.*\})", output)
    if match is None:
        raise RuntimeError(f"wrk printed no result:\n{output}")
    data: dict[str, int] = json.loads(match.group(1))
    return data


def settle(url: str) -> None:
    """After a bulk load, do now what autovacuum and the checkpointer would do in the
    background anyway (statistics, hint bits and visibility map, dirty pages), so that it is
    not done during, and counted against, the next measurement."""
    if url.startswith("postgresql"):
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE")
            conn.execute("CHECKPOINT")


def seed(base: str, key: str, count: int) -> list[str]:
    ids = []
    with httpx.Client(base_url=base, timeout=30) as client:
        for n in range(count):
            body = {
                "external_ref": f"SEED-{n}",
                "patient": {"first_name": "Seed", "phone": "+2348031234567", "city": "Lagos"},
                "reason": "Knee pain",
                "care_mode": "either",
                "preferred_contact": "messaging",
                "route": "assistant" if n % 2 else "contact",
                "consent": {
                    "accepted": True,
                    "accepted_at": "2026-11-20T09:30:00Z",
                    "version": "2026-01",
                    "source": "bench",
                },
            }
            response = client.post(
                "/api/v1/partners/referrals",
                json=body,
                headers={"Authorization": f"Bearer {key}", "Idempotency-Key": f"seed-{n}"},
            )
            response.raise_for_status()
            ids.append(response.json()["referral_id"])
    return ids


def run_backend(backend: str, seconds: int) -> list[Measurement]:
    workers = 1 if backend == "sqlite" else (os.cpu_count() or 1)
    server_flags = uvicorn_flags(workers)
    results: list[Measurement] = []
    bare_port = free_port()
    bare = [
        sys.executable,
        "-m",
        "uvicorn",
        "bench.yardstick:app",
        "--port",
        str(bare_port),
        *server_flags,
    ]
    env = bench_env()

    def measure_yardstick(when: str) -> None:
        with serve(bare, env, "/ping", bare_port) as base:
            results.append(
                wrk(f"{backend}: bare Starlette JSON ({when})", base, "bare.lua", [], 64, seconds)
            )

    # Before and after the application's scenarios: the ratios use the mean of the two, so a
    # drift in the machine's speed during the run moves both sides alike.
    measure_yardstick("before")
    with fresh_database(backend, RESULTS) as url:
        if backend == "postgres":
            reference_port = free_port()
            reference = [
                sys.executable,
                "-m",
                "uvicorn",
                "bench.reference_insert:app",
                "--port",
                str(reference_port),
                *server_flags,
            ]
            create_reference_table(url)
            reference_env = {**env, "BENCH_DATABASE_URL": url}
            with serve(reference, reference_env, "/items", reference_port, ok=(405,)) as base:
                # Also at 32 connections: the latency the simplest database-writing app gets
                # on this machine, beside the p99 target for creates at 32 connections.
                for connections in (64, 32):
                    results.append(
                        wrk(
                            f"{backend}: reference one-insert app",
                            base,
                            "reference_insert.lua",
                            [],
                            connections,
                            seconds,
                        )
                    )
        partner = onboard(url)
        key = partner["keys"]["sk_test"]
        port = free_port()
        argv, app_env = app_server(url, port, workers)
        with serve(argv, app_env, "/readyz", port) as base:
            ids = seed(base, key, 500)
            ids_file = RESULTS / f"ids-{backend}.txt"
            ids_file.write_text("\n".join(ids) + "\n")
            for connections in (64, 32):
                results.append(
                    wrk(
                        f"{backend}: create referral",
                        base,
                        "create.lua",
                        [key],
                        connections,
                        seconds,
                    )
                )
                # The create run just bulk-loaded thousands of rows: without fresh statistics
                # the planner sorted 30 000 rows per list request.
                settle(url)
                results.append(
                    wrk(
                        f"{backend}: get by id",
                        base,
                        "get.lua",
                        [key, str(ids_file)],
                        connections,
                        seconds,
                    )
                )
                results.append(
                    wrk(f"{backend}: list by status", base, "list.lua", [key], connections, seconds)
                )
    measure_yardstick("after")
    return results


def yardstick(results: list[Measurement], backend: str) -> float | None:
    """Mean req/s of the yardstick runs of ``backend`` (before and after)."""
    runs = [m.requests_per_s for m in results if m.name.startswith(f"{backend}: bare")]
    return sum(runs) / len(runs) if runs else None


def print_table(results: list[Measurement]) -> None:
    print(f"{'scenario':38} {'conns':>5} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'errors':>6}")
    for m in results:
        print(
            f"{m.name:38} {m.connections:>5} {m.requests_per_s:>9.0f} {m.p50_ms:>8.2f} "
            f"{m.p99_ms:>8.2f} {m.errors:>6}"
        )
    for backend in ("postgres", "sqlite"):
        bare = yardstick(results, backend)
        if bare is None:
            continue
        print(f"{backend}: yardstick (mean of before and after) = {bare:.0f} req/s")
        for label in ("reference one-insert app", "create referral", "get by id", "list by status"):
            found = next(
                (m for m in results if m.name == f"{backend}: {label}" and m.connections == 64),
                None,
            )
            if found is not None:
                print(f"{backend}: {label} / bare = {found.requests_per_s / bare:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--backend", choices=["postgres", "sqlite", "both"], default="both")
    options = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    backends = ["postgres", "sqlite"] if options.backend == "both" else [options.backend]
    results: list[Measurement] = []
    for backend in backends:
        results.extend(run_backend(backend, options.seconds))
    print_table(results)
    (RESULTS / "latest.json").write_text(json.dumps([m.__dict__ for m in results], indent=2))


if __name__ == "__main__":
    main()
