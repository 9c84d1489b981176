"""`rehabref serve` hands its options to every server process as an object (rehabref.serving),
not through environment variables."""

from __future__ import annotations

import ipaddress
import pickle
import signal
import socket
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


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found.update(int(child) for child in (task / "children").read_text().split())
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has exited


def _port_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_server_processes_exit_when_the_supervisor_is_killed(database_url, tmp_path):
    port = free_port()
    env = {
        **isolated_environ(),
        "REHABREF_DATABASE_URL": database_url,
        "REHABREF_SECRET_KEY": TEST_SECRET_KEY,
    }
    log_path = tmp_path / "serve.log"
    args = ["--workers", "2", "--host", "127.0.0.1", "--port", str(port), "--no-worker"]
    with log_path.open("wb") as log:
        supervisor = subprocess.Popen(
            [sys.executable, "-m", "rehabref.cli", "serve", *args],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for_started_processes(log_path, 2, supervisor)
        servers = {pid for pid in _children(supervisor.pid) if _alive(pid)}
        assert len(servers) >= 2
        assert httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=10).status_code == 200
        supervisor.send_signal(signal.SIGKILL)
        supervisor.wait(timeout=10)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and (
            any(_alive(pid) for pid in servers) or not _port_free(port)
        ):
            time.sleep(0.1)
        assert not [pid for pid in servers if _alive(pid)], log_path.read_text()[-2000:]
        assert _port_free(port)
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
            supervisor.wait()


def test_the_watch_ends_a_process_whose_parent_is_gone(tmp_path):
    """Where prctl is unavailable: a thread notices the re-parenting and sends SIGTERM."""
    script = tmp_path / "orphan.py"
    script.write_text(
        "import os, sys, time\n"
        "from rehabref import parent_death\n"
        "parent_death.exit_with_parent(os.getppid(), poll_seconds=0.05, use_prctl=False)\n"
        "print(os.getpid(), flush=True)\n"
        "time.sleep(30)\n"
    )
    middle = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time\n"
            f"child = subprocess.Popen([sys.executable, {str(script)!r}], stdout=sys.stdout)\n"
            "time.sleep(30)\n",
        ],
        stdout=subprocess.PIPE,
        env=isolated_environ(),
    )
    assert middle.stdout is not None
    orphan = int(middle.stdout.readline())
    middle.kill()
    middle.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(orphan):
        time.sleep(0.05)
    assert not _alive(orphan)
