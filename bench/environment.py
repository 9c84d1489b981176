"""Databases, partners and ports for benchmarks (independent of the test suite)."""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psycopg

from rehabref.config import load_settings
from rehabref.crypto import KeyRing
from rehabref.db import Database
from rehabref.instance_secret import secret_box
from rehabref.migrate import upgrade
from rehabref.partners.service import create_partner
from rehabref.sandbox.phones import TEST_PHONES

POSTGRES_ADMIN = os.environ.get(
    "REHABREF_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def fresh_database(backend: str, directory: Path) -> Iterator[str]:
    if backend == "sqlite":
        path = directory / f"bench-{secrets.token_hex(4)}.db"
        url = f"sqlite:///{path}"
        upgrade(url)
        try:
            yield url
        finally:
            for suffix in ("", "-wal", "-shm"):
                Path(str(path) + suffix).unlink(missing_ok=True)
        return
    name = f"rehabref_bench_{secrets.token_hex(4)}"
    with psycopg.connect(POSTGRES_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = POSTGRES_ADMIN.rsplit("/", 1)[0] + f"/{name}"
    try:
        upgrade(url)
        yield url
    finally:
        with psycopg.connect(POSTGRES_ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def key_ring(url: str) -> KeyRing:
    """The ring the bench's servers and workers load (same environment and working
    directory): events written by the bench are sealed under it."""
    return secret_box(load_settings({**os.environ, "REHABREF_DATABASE_URL": url})).ring


def onboard(url: str, name: str = "Bench Clinic") -> dict[str, Any]:
    async def work() -> dict[str, Any]:
        db = Database(url, pool_size=1)
        try:
            # The ring the bench's servers load (same environment and working directory).
            box = secret_box(load_settings({**os.environ, "REHABREF_DATABASE_URL": url}))
            async with db.write() as conn:
                result = await create_partner(conn, box=box, name=name)
            return result.as_dict(test_phones=TEST_PHONES)
        finally:
            await db.dispose()

    return asyncio.run(work())


def serve_api(env: dict[str, str], port: int, log: Path) -> subprocess.Popen[bytes]:
    """``rehabref serve --workers 2 --no-worker`` (two API processes), once it is ready."""
    argv = [sys.executable, "-m", "rehabref.cli", "serve", "--workers", "2", "--no-worker"]
    process = subprocess.Popen(
        argv,
        env={**env, "REHABREF_PORT": str(port)},
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited, see {log}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError("server did not start")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]
