"""Fixtures for delivery tests: a loopback receiver and `rehabref worker` subprocesses."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import auth
from tests.support.receiver import Receiver
from tests.support.server import isolated_environ


class WorkerProcess:
    def __init__(self, database_url: str, log_path: Path, **env: str) -> None:
        self.log_path = log_path
        self.env = {
            **isolated_environ(),
            "REHABREF_DATABASE_URL": database_url,
            "REHABREF_ALLOW_LOOPBACK_WEBHOOK_TARGETS": "true",
            "REHABREF_SECRET_KEY": "test-secret-key-not-for-production",
            "REHABREF_WEBHOOK_RETRY_BASE_SECONDS": "0.3",
            **env,
        }
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> WorkerProcess:
        self._log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rehabref.cli", "worker"],
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        return self

    def kill(self) -> None:
        """SIGKILL: no chance to release claims."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        self._log.close()

    def logs(self) -> str:
        return self.log_path.read_text(errors="replace")


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    instance = Receiver().start()
    yield instance
    instance.stop()


@pytest.fixture
def start_worker(database_url: str, tmp_path: Path) -> Iterator[Callable[..., WorkerProcess]]:
    started: list[WorkerProcess] = []

    def start(**env: str) -> WorkerProcess:
        worker = WorkerProcess(database_url, tmp_path / f"worker{len(started)}.log", **env)
        started.append(worker.start())
        return worker

    yield start
    for worker in started:
        worker.stop()


def register(client: httpx.Client, key: str, url: str, **extra: Any) -> dict[str, Any]:
    response = client.post(
        "/api/v1/partners/webhook-endpoints", json={"url": url, **extra}, headers=auth(key)
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


def trigger(client: httpx.Client, key: str, event: str, url: str) -> dict[str, Any]:
    response = client.post(
        "/api/v1/sandbox/trigger-webhook",
        json={"event": event, "target_url": url},
        headers=auth(key),
    )
    assert response.status_code == 202, response.text
    return dict(response.json())
