"""A real webhook receiver for the sandbox tests: a threaded HTTP server on loopback.

With ``secret`` it behaves as docs/webhooks.md asks a receiver to, written out here
independently of rehabref's code: a request whose signature does not verify, or whose
``X-Service-Timestamp`` is more than five minutes from its own clock, is refused (401); an
``event_id`` it has processed already is answered 200 and not processed again; any other
event is processed once. Without ``secret`` every request is processed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOLERANCE_SECONDS = 300


class Receiver:
    def __init__(self, secret: str | None = None) -> None:
        self.received: list[dict[str, Any]] = []
        self.secret = secret
        self._processed: set[str] = set()
        self._lock = threading.Lock()
        # Notified on every request, so waiting needs no polling sleeps.
        self._arrived = threading.Condition(self._lock)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                item = {
                    "at": time.monotonic(),
                    "headers": headers,
                    "raw": raw,
                    "body": json.loads(raw),
                }
                with receiver._lock:
                    item["answered"], item["processed"] = receiver._decide(headers, raw)
                    receiver.received.append(item)
                    receiver._arrived.notify_all()
                self.send_response(item["answered"])
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"ok" if item["answered"] == 200 else b"no")

            def log_message(self, *args: Any) -> None:
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/hooks"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _decide(self, headers: dict[str, str], raw: bytes) -> tuple[int, bool]:
        """(status answered, processed?) for one request; called under the lock."""
        if self.secret is None:
            return 200, True
        timestamp = headers.get("x-service-timestamp", "")
        if not timestamp.isdigit() or abs(time.time() - int(timestamp)) > TOLERANCE_SECONDS:
            return 401, False
        expected = hmac.new(
            self.secret.encode(), f"{timestamp}.".encode() + raw, hashlib.sha256
        ).hexdigest()
        offered = [v[3:] for v in headers.get("x-service-signature", "").split(" ")]
        if not any(hmac.compare_digest(value, expected) for value in offered):
            return 401, False
        event_id = headers.get("x-service-event-id", "")
        if event_id in self._processed:
            return 200, False
        self._processed.add(event_id)
        return 200, True

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()

    def copies(self, event_id: str) -> list[dict[str, Any]]:
        """Every request that carried this event, in arrival order."""
        with self._lock:
            return [i for i in self.received if i["body"]["event_id"] == event_id]

    def events(self, referral_id: str, event_type: str | None = None) -> list[dict[str, Any]]:
        """The events processed for a referral (one per event_id with ``secret``)."""
        with self._lock:
            return self._processed_for(referral_id, event_type)

    def _processed_for(self, referral_id: str, event_type: str | None) -> list[dict[str, Any]]:
        return [
            item
            for item in self.received
            if item["processed"]
            and item["body"]["data"].get("referral_id") == referral_id
            and (event_type is None or item["body"]["type"] == event_type)
        ]

    def wait_for(
        self, referral_id: str, event_type: str, *, timeout: float = 60.0
    ) -> dict[str, Any]:
        """The first processed ``event_type`` of the referral, waiting up to ``timeout``."""
        with self._arrived:
            found = self._arrived.wait_for(
                lambda: self._processed_for(referral_id, event_type), timeout=timeout
            )
        if not found:
            raise AssertionError(f"no {event_type} for {referral_id} within {timeout} s")
        return found[0]
