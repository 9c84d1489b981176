"""A real webhook receiver for tests: a threaded HTTP server that records every POST."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver:
    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                with receiver._lock:
                    receiver.received.append(
                        {
                            "at": time.monotonic(),
                            "headers": {k.lower(): v for k, v in self.headers.items()},
                            "raw": raw,
                            "body": json.loads(raw),
                        }
                    )
                self.send_response(200)
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/hooks"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()

    def events(self, referral_id: str, event_type: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            items = list(self.received)
        return [
            item
            for item in items
            if item["body"]["data"].get("referral_id") == referral_id
            and (event_type is None or item["body"]["type"] == event_type)
        ]

    def wait_for(
        self, referral_id: str, event_type: str, *, timeout: float = 60.0
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.events(referral_id, event_type)
            if found:
                return found[0]
            time.sleep(0.05)
        raise AssertionError(f"no {event_type} for {referral_id} within {timeout} s")
