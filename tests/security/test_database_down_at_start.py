"""``serve`` started while the database cannot be reached: it starts, answers ``/healthz`` 200
and API requests 503 (the spec's error body, ``Retry-After``), and serves normally once the
database is back, with no traceback in its log.

PostgreSQL only (a SQLite file cannot be "down"): the server's database URL points at a local
TCP relay to the real PostgreSQL, closed at first and opened later.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.engine import make_url

from tests.support.api import bearer
from tests.support.server import ServerProcess, free_port


class Relay:
    """Forwards each connection on ``port`` to ``target``, once ``open`` has been called."""

    def __init__(self, port: int, target: tuple[str, int]) -> None:
        self.port = port
        self.target = target
        self._listener: socket.socket | None = None

    def open(self) -> None:
        listener = socket.create_server(("127.0.0.1", self.port))
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def close(self) -> None:
        if self._listener is not None:
            self._listener.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pump, args=(source, sink), daemon=True).start()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)


def test_serve_starts_without_its_database_and_recovers_when_it_returns(
    backend: str, database_url: str, partner: dict[str, Any], tmp_path: Path
) -> None:
    if backend != "postgres":
        pytest.skip("a SQLite database is a file: it cannot be unreachable")
    real = make_url(database_url)
    relay = Relay(free_port(), (real.host or "127.0.0.1", real.port or 5432))
    relayed = real.set(host="127.0.0.1", port=relay.port).render_as_string(hide_password=False)
    log = tmp_path / "server.log"
    server = ServerProcess(relayed, log).start(ready_path="/healthz")
    try:
        assert httpx.get(f"{server.base_url}/healthz").status_code == 200
        assert httpx.get(f"{server.base_url}/readyz").status_code == 503
        down = httpx.get(
            f"{server.base_url}/api/v1/partners/referrals",
            headers=bearer(partner["keys"]["sk_test"]),
        )
        assert down.status_code == 503, down.text
        assert down.headers["Retry-After"] == "1"
        error = down.json()["error"]
        assert error["code"] == "service_unavailable"
        assert set(error) == {"code", "message", "fields", "request_id"}

        relay.open()
        deadline = time.monotonic() + 20
        while httpx.get(f"{server.base_url}/readyz").status_code != 200:
            assert time.monotonic() < deadline, "the database never became ready"
            time.sleep(0.2)
        up = httpx.get(
            f"{server.base_url}/api/v1/partners/referrals",
            headers=bearer(partner["keys"]["sk_test"]),
        )
        assert up.status_code == 200, up.text
    finally:
        server.stop()
        relay.close()
    text = log.read_text()
    assert "Traceback" not in text
    assert "database cannot be reached yet" in text
