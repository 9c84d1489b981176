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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tests.support.provider_stand_in import RecordedRequest, RecordingServer, Response
from tests.support.server import free_port

TwilioRequest = RecordedRequest


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
    requests: list[RecordedRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._server: RecordingServer | None = None

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

    def respond(self, request: RecordedRequest, index: int) -> Response:
        rejected = self.check(request)
        if rejected is not None:
            return Response(rejected[0], json.dumps(twilio_error(*rejected)).encode(), {})
        answer = self.behaviour(request, index)
        headers = {"Retry-After": answer.retry_after} if answer.retry_after else {}
        if answer.status == 201:
            form = request.form()
            sid = "SM" + secrets.token_hex(16)
            body = {
                "sid": sid,
                "account_sid": self.account_sid,
                "to": form["To"][0],
                "from": form["From"][0],
                "body": form["Body"][0],
                "status": "queued",
                "num_segments": "1",
                "direction": "outbound-api",
                "api_version": "2010-04-01",
                "uri": f"/2010-04-01/Accounts/{self.account_sid}/Messages/{sid}.json",
            }
        else:
            body = twilio_error(answer.status, answer.code or 20500)
        return Response(answer.status, json.dumps(body).encode(), headers, delay=answer.delay)

    def start(self) -> TwilioApi:
        self._server = RecordingServer(self.port, self.requests, self.respond)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
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
