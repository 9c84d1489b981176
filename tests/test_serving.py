"""`rehabref serve` hands its options to every server process as an object (rehabref.serving),
not through environment variables."""

from __future__ import annotations

import ipaddress
import pickle
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from rehabref.config import Settings
from rehabref.serving import AppFactory
from tests.support.partners import TEST_SECRET_KEY
from tests.support.server import free_port, isolated_environ


def test_the_app_factory_survives_the_pickling_that_starts_each_server_process():
    settings = Settings(
        database_url="postgresql://rehabref@db.internal/rehabref",
        host="0.0.0.0",
        port=9123,
        trusted_proxies=(ipaddress.ip_network("10.0.0.0/8"),),
    )
    factory = AppFactory(settings, run_worker=False)
    assert pickle.loads(pickle.dumps(factory)) == factory


def wait_for_started_processes(log: Path, count: int, process: subprocess.Popen[bytes]) -> str:
    # Generous: spawning and importing two server processes on a loaded 2-core machine is slow.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        text = log.read_text()
        if text.count("Application startup complete.") >= count:
            return text
        if process.poll() is not None:
            raise AssertionError(f"serve exited: {text[-2000:]}")
        time.sleep(0.1)
    raise AssertionError(f"{count} server processes did not start: {log.read_text()[-2000:]}")


@pytest.mark.parametrize(("workers", "no_worker"), [(1, True), (2, False), (2, True)])
def test_serve_options_reach_every_server_process(database_url, tmp_path, workers, no_worker):
    port = free_port()
    env = {
        **isolated_environ(),
        "REHABREF_DATABASE_URL": database_url,
        "REHABREF_SECRET_KEY": TEST_SECRET_KEY,
        # Addresses the flags must win over: this host cannot be bound here.
        "REHABREF_HOST": "192.0.2.1",
        "REHABREF_PORT": str(free_port()),
    }
    args = ["--workers", str(workers), "--host", "127.0.0.1", "--port", str(port)]
    log_path = tmp_path / "serve.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "rehabref.cli", "serve", *args]
            + (["--no-worker"] if no_worker else []),
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        text = wait_for_started_processes(log_path, workers, process)
        assert httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=10).status_code == 200
    finally:
        process.terminate()
        process.wait(timeout=30)
    started_workers = text.count("delivery worker started")
    assert started_workers == (0 if no_worker else workers)
