"""A real rehabref server (uvicorn in a subprocess) on a free loopback port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx


def isolated_environ() -> dict[str, str]:
    """This process's environment for a rehabref subprocess, without the REHABREF_* settings
    exported in the shell (a Redis URL, a rate limit...): its settings are the test's alone.
    The suite's own REHABREF_TEST_* variables are kept."""
    return {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("REHABREF_") or name.startswith("REHABREF_TEST_")
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerProcess:
    def __init__(self, database_url: str, log_path: Path, **env: str) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self.env = {
            **isolated_environ(),
            "REHABREF_DATABASE_URL": database_url,
            "REHABREF_HOST": "127.0.0.1",
            "REHABREF_PORT": str(self.port),
            "REHABREF_RATE_LIMIT": "100000/second",
            "REHABREF_FORM_RATE_LIMIT_IP": "100000/minute",
            "REHABREF_PAGE_RATE_LIMIT_IP": "100000/minute",
            "REHABREF_PDF_RATE_LIMIT_IP": "100000/minute",
            "REHABREF_ALLOW_LOOPBACK_WEBHOOK_TARGETS": "true",
            # The suite's loopback receivers, as often as the tests need (the trigger's own
            # limits are tested in tests/events/test_fair_delivery.py).
            "REHABREF_SANDBOX_TRIGGER_ORIGINS": "http://127.0.0.1",
            "REHABREF_SANDBOX_TRIGGER_RATE_LIMIT": "100000/minute",
            "REHABREF_SECRET_KEY": "test-secret-key-not-for-production",
            **env,
        }
        self._process: subprocess.Popen[bytes] | None = None

    def start(self, *args: str, ready_path: str = "/readyz") -> ServerProcess:
        self._log = self.log_path.open("ab")
        self._process = subprocess.Popen(
            [sys.executable, "-m", "rehabref.cli", "serve", "--workers", "1", *args],
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 120  # a loaded 2-core machine (two workers start slower)
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"server exited: {self.log_path.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.base_url}{ready_path}", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()  # not left running when the caller never gets to stop it
        raise RuntimeError("server did not become ready")

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        if getattr(self, "_log", None):
            self._log.close()

    def logs(self) -> str:
        return self.log_path.read_text(errors="replace")
