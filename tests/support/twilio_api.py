"""A Twilio Messages API stand-in on a real loopback HTTP server (stdlib only), plus an
X-Twilio-Signature builder written from Twilio's documentation (not rehabref's code).

Checks what Twilio checks first (the path's account, Basic auth, the form's To/From/Body)
and answers 201 like Twilio; per-request answers are configurable.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

from tests.support.server import free_port


@dataclass
class TwilioRequest:
    path: str
    authorization: str
    content_type: str
    raw: bytes
    at: float

    def form(self) -> dict[str, list[str]]:
        return parse_qs(self.raw.decode(), keep_blank_values=True)


@dataclass(frozen=True)
class Answer:
    status: int = 201
    code: int | None = None
    retry_after: str | None = None
    delay: float = 0.0


Behaviour = Callable[[TwilioRequest, int], Answer]


def sequence(*answers: Answer) -> Behaviour:
    return lambda _r, index: answers[min(index, len(answers) - 1)]


def twilio_error(status: int, code: int, message: str = "error") -> dict[str, Any]:
    return {
        "code": code,
        "message": message,
        "more_info": f"https://www.twilio.com/docs/errors/{code}",
        "status": status,
    }


@dataclass
class TwilioApi:
    account_sid: str = "AC" + "0123456789abcdef" * 2
    auth_token: str = "twilio-test-token"
    behaviour: Behaviour = field(default=lambda _r, _i: Answer())
    port: int = field(default_factory=free_port)
    requests: list[TwilioRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def check(self, request: TwilioRequest) -> tuple[int, int] | None:
        """(status, Twilio code) when Twilio would reject this before sending, or None."""
        if request.path != f"/2010-04-01/Accounts/{self.account_sid}/Messages.json":
            return 404, 20404
        credentials = f"{self.account_sid}:{self.auth_token}".encode()
        if request.authorization != "Basic " + base64.b64encode(credentials).decode():
            return 401, 20003
        if not request.content_type.startswith("application/x-www-form-urlencoded"):
            return 400, 21601
        form = request.form()
        if not form.get("To") or not form.get("From") or not form.get("Body"):
            return 400, 21602
        return None

    def start(self) -> TwilioApi:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                request = TwilioRequest(
                    path=self.path,
                    authorization=self.headers.get("Authorization", ""),
                    content_type=self.headers.get("Content-Type", ""),
                    raw=self.rfile.read(length),
                    at=time.time(),
                )
                with api._lock:
                    index = len(api.requests)
                    api.requests.append(request)
                rejected = api.check(request)
                if rejected is not None:
                    self.answer(rejected[0], twilio_error(*rejected), {})
                    return
                answer = api.behaviour(request, index)
                if answer.delay:
                    time.sleep(answer.delay)
                headers = {"Retry-After": answer.retry_after} if answer.retry_after else {}
                if answer.status == 201:
                    form = request.form()
                    sid = "SM" + secrets.token_hex(16)
                    body = {
                        "sid": sid,
                        "account_sid": api.account_sid,
                        "to": form["To"][0],
                        "from": form["From"][0],
                        "body": form["Body"][0],
                        "status": "queued",
                        "num_segments": "1",
                        "direction": "outbound-api",
                        "api_version": "2010-04-01",
                        "uri": f"/2010-04-01/Accounts/{api.account_sid}/Messages/{sid}.json",
                    }
                else:
                    body = twilio_error(answer.status, answer.code or 20500)
                self.answer(answer.status, body, headers)

            def answer(self, status: int, body: dict[str, Any], headers: dict[str, str]) -> None:
                payload = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    return

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


def sign(auth_token: str, url: str, params: Mapping[str, str]) -> str:
    """X-Twilio-Signature per Twilio's docs: take the full URL, append each POST field's
    name and value with the fields sorted alphabetically by name, HMAC-SHA1 it with the
    auth token, base64 the digest."""
    text = url
    for name in sorted(params):
        text += name + params[name]
    mac = hmac.new(auth_token.encode("utf-8"), text.encode("utf-8"), hashlib.sha1)
    return base64.b64encode(mac.digest()).decode("ascii")
