"""The loopback HTTP server every provider stand-in runs on (stdlib only): it records each
POST (and GET, for APIs read that way) in arrival order and answers what the stand-in's
``respond`` decides, after an optional delay (a slow or hanging provider)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs


@dataclass
class RecordedRequest:
    path: str
    authorization: str
    content_type: str
    raw: bytes
    at: float  # time.time() when it arrived
    method: str = "POST"

    def json(self) -> dict[str, Any]:
        return dict(json.loads(self.raw))

    def form(self) -> dict[str, list[str]]:
        return parse_qs(self.raw.decode(), keep_blank_values=True)


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    headers: dict[str, str]
    delay: float = 0.0


# (the request, its index among every request so far) -> the answer
Respond = Callable[[RecordedRequest, int], Response]


class RecordingServer:
    def __init__(self, port: int, requests: list[RecordedRequest], respond: Respond) -> None:
        self.requests = requests
        lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                self.do_POST(method="GET")

            def do_POST(self, method: str = "POST") -> None:
                length = int(self.headers.get("Content-Length") or 0)
                request = RecordedRequest(
                    path=self.path,
                    authorization=self.headers.get("Authorization", ""),
                    content_type=self.headers.get("Content-Type", ""),
                    raw=self.rfile.read(length),
                    at=time.time(),
                    method=method,
                )
                with lock:
                    index = len(requests)
                    requests.append(request)
                answer = respond(request, index)
                if answer.delay:
                    time.sleep(answer.delay)
                try:
                    self.send_response(answer.status)
                    for name, value in answer.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(answer.body)))
                    self.end_headers()
                    self.wfile.write(answer.body)
                except OSError:
                    return  # the client gave up (a timeout test)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        # Polled every 20 ms: Python's default 0.5 s would slow every test's shutdown.
        threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True).start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
