"""Interleaved A/B rounds of two builds on one PostgreSQL database (docs/performance.md,
"Judging a change").

Each build is a checkout with its own ``.venv`` (a git worktree after ``make install``). One
fresh database, one partner and 500 seeded referrals; then, round after round, each build's
server is started (``bench.run``'s settings), driven by wrk for the warm-up and the measured
seconds, and stopped; the order of the builds alternates between rounds. Besides req/s and
latency it reports the CPU the server's processes used per request (from /proc), which other
work on a shared machine moves less than throughput. Usage::

    python -m bench.ab --a ../wt-base --b . --scenario get --connections 64 --rounds 4
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.environment import free_port, fresh_database, onboard
from bench.run import RESULTS, Measurement, app_server, seed, serve, settle, wrk, wrk_counts

_SCRIPTS = {"create": "create.lua", "get": "get.lua", "list": "list.lua"}
_TICKS = os.sysconf("SC_CLK_TCK")


def _tree_cpu_seconds(root: int) -> float:
    """User and system CPU of ``root`` and its living descendants (the uvicorn workers)."""
    total = 0.0
    pending = [root]
    while pending:
        pid = pending.pop()
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / _TICKS
            for task in Path(f"/proc/{pid}/task").iterdir():
                children = (task / "children").read_text().split()
                pending.extend(int(child) for child in children)
        except FileNotFoundError:
            continue
    return total


def _postgres_cpu_seconds(database: str) -> float:
    """CPU of the PostgreSQL backends connected to ``database``, and of the WAL writer."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().decode(errors="replace")
            if not command.startswith("postgres:"):
                continue
            if database not in command and "walwriter" not in command:
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / _TICKS
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total


def _server_pid(port: int) -> int:
    output = subprocess.run(
        ["pgrep", "-f", "--", f"--port {port}"], capture_output=True, text=True, check=True
    ).stdout.split()
    return min(int(pid) for pid in output)


def _round(
    build: Path, url: str, key_file: str, scenario: str, args: list[str], conns: int, secs: int
) -> tuple[Measurement, float, float]:
    port = free_port()
    argv, env = app_server(url, port, os.cpu_count() or 1)
    argv[0] = str(build / ".venv" / "bin" / "python")
    env = {**env, "REHABREF_SECRET_KEY_FILE": key_file}
    with serve(argv, env, "/readyz", port) as base:
        pid = _server_pid(port)
        wrk_counts(base, _SCRIPTS[scenario], args, conns, 3)  # unmeasured warm-up
        database = url.rsplit("/", 1)[1]
        before = _tree_cpu_seconds(pid)
        before_postgres = _postgres_cpu_seconds(database)
        result = wrk(
            f"{build.name}: {scenario}", base, _SCRIPTS[scenario], args, conns, secs, warm_up=0
        )
        used = _tree_cpu_seconds(pid) - before
        used_postgres = _postgres_cpu_seconds(database) - before_postgres
    requests = result.requests_per_s * secs / 1e6
    return result, used / requests, used_postgres / requests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--a", type=Path, required=True)
    parser.add_argument("--b", type=Path, required=True)
    parser.add_argument("--scenario", choices=sorted(_SCRIPTS), default="get")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seconds", type=int, default=8)
    options = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    builds = [options.a.resolve(), options.b.resolve()]
    rows: dict[Path, list[tuple[Measurement, float, float]]] = {build: [] for build in builds}
    with tempfile.TemporaryDirectory() as scratch, fresh_database("postgres", RESULTS) as url:
        key_file = str(Path(scratch) / "rehabref.key")
        os.environ["REHABREF_SECRET_KEY_FILE"] = key_file
        key = onboard(url)["keys"]["sk_test"]
        port = free_port()
        argv, env = app_server(url, port, os.cpu_count() or 1)
        with serve(argv, {**env, "REHABREF_SECRET_KEY_FILE": key_file}, "/readyz", port) as base:
            ids = seed(base, key, 500)
        settle(url)
        ids_file = RESULTS / "ids-ab.txt"
        ids_file.write_text("\n".join(ids) + "\n")
        args = [key, str(ids_file)] if options.scenario == "get" else [key]
        for n in range(options.rounds):
            for build in builds if n % 2 == 0 else builds[::-1]:
                measured = _round(
                    build,
                    url,
                    key_file,
                    options.scenario,
                    args,
                    options.connections,
                    options.seconds,
                )
                rows[build].append(measured)
                m, cpu, postgres_cpu = measured
                print(
                    f"round {n + 1} {build.name:>14}: {m.requests_per_s:8.0f} req/s "
                    f"p50 {m.p50_ms:6.2f} p99 {m.p99_ms:6.2f} ms, errors {m.errors}, "
                    f"CPU us/request: server {cpu:4.0f}, postgres {postgres_cpu:4.0f}",
                    flush=True,
                )
                if options.scenario == "create":
                    settle(url)
    for build in builds:
        done = rows[build]
        print(
            f"median {build.name:>14}: "
            f"{statistics.median(m.requests_per_s for m, _, _ in done):8.0f} req/s "
            f"p99 {statistics.median(m.p99_ms for m, _, _ in done):6.2f} ms, "
            f"errors {sum(m.errors for m, _, _ in done)}, CPU us/request: "
            f"server {statistics.median(cpu for _, cpu, _ in done):4.0f}, "
            f"postgres {statistics.median(pg for _, _, pg in done):4.0f}"
        )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
