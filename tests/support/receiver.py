"""An independent webhook receiver on a real loopback HTTP server (stdlib only).

It checks signatures with its own HMAC code (not rehabref's), records every request and
answers with a configurable status. Used by the delivery tests.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.server import free_port


@dataclass
class Received:
    event_id: str
    timestamp: str
    signature: str
    body: bytes
    at: float  # time.time() when the request arrived
    finished_at: float = 0.0
    path: str = "/"

    def json(self) -> dict[str, Any]:
        return dict(json.loads(self.body))

    def signature_valid(self, secret: str, *, tolerance: int = 300) -> bool:
        """Spec 6.3, written out independently: any v1 value over "{ts}.{body}" matches."""
        if abs(time.time() - int(self.timestamp)) > tolerance:
            return False
        expected = hmac.new(
            secret.encode("utf-8"), f"{self.timestamp}.".encode() + self.body, hashlib.sha256
        ).hexdigest()
        values = [p[3:] for p in self.signature.split(" ") if p.startswith("v1=")]
        return any(hmac.compare_digest(v, expected) for v in values)


# (received, index of this request) -> (status, extra headers, seconds to wait first)
Behaviour = Callable[[Received, int], tuple[int, dict[str, str], float]]


def always(status: int) -> Behaviour:
    return lambda _r, _i: (status, {}, 0.0)


@dataclass
class Receiver:
    behaviour: Behaviour = field(default_factory=lambda: always(200))
    port: int = field(default_factory=free_port)
    received: list[Received] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight_per_event: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._active: dict[str, int] = {}
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks"

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                item = Received(
                    event_id=self.headers.get("X-Service-Event-ID", ""),
                    timestamp=self.headers.get("X-Service-Timestamp", "0"),
                    signature=self.headers.get("X-Service-Signature", ""),
                    body=self.rfile.read(length),
                    at=time.time(),
                    path=self.path,
                )
                with receiver._lock:
                    index = len(receiver.received)
                    receiver.received.append(item)
                    active = receiver._active.get(item.event_id, 0) + 1
                    receiver._active[item.event_id] = active
                    previous = receiver.max_in_flight_per_event.get(item.event_id, 0)
                    receiver.max_in_flight_per_event[item.event_id] = max(previous, active)
                try:
                    status, headers, delay = receiver.behaviour(item, index)
                    if delay:
                        time.sleep(delay)
                    payload = b'{"ok":true}' if status < 300 else b'{"error":"nope"}'
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                finally:
                    item.finished_at = time.time()
                    with receiver._lock:
                        receiver._active[item.event_id] -= 1

            def log_message(self, format: str, *args: Any) -> None:
                return

        class Server(ThreadingHTTPServer):
            request_queue_size = 256  # the default backlog of 5 refuses bursts of connections

        self._server = Server(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def event_ids(self) -> set[str]:
        with self._lock:
            return {item.event_id for item in self.received}

    def for_event(self, event_id: str) -> list[Received]:
        with self._lock:
            return [item for item in self.received if item.event_id == event_id]

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            time.sleep(0.05)
        raise AssertionError(f"receiver condition not met in {timeout}s; got {len(self.received)}")
