"""A WhatsApp Cloud API stand-in on a real loopback HTTP server (stdlib only), plus
builders for inbound webhook bodies signed the way Meta signs them.

The server checks what Meta checks first (path, Bearer token, the envelope's fields) and
answers 400 with a Graph error body when they are wrong; otherwise it answers per request
with a configurable ``Answer`` (success, a Graph error code, a delay or a hang). The
webhook builders and the signature are written from Meta's documentation, not from
rehabref's code.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.support.provider_stand_in import RecordedRequest, RecordingServer, Response
from tests.support.server import free_port

VERSION = "v21.0"
# The approved templates (docs/channels.md): body variables and quick-reply buttons. Meta
# refuses a send whose counts differ (error 132000).
TEMPLATES = {
    "rehabref_intake_start": (3, 2),
    "rehabref_intake_reminder": (2, 2),
    "rehabref_appointment_confirmed": (3, 0),
    "rehabref_appointment_reminder": (3, 0),
}
ENVELOPE_TYPES = {"text", "interactive", "template"}


GraphRequest = RecordedRequest


@dataclass(frozen=True)
class Answer:
    """What the stand-in answers: ``status`` 200 is a success; otherwise a Graph error
    with ``code`` (and Retry-After when ``retry_after`` is set). ``delay`` seconds first."""

    status: int = 200
    code: int | None = None
    retry_after: str | None = None
    delay: float = 0.0
    raw_body: bytes | None = None  # overrides the JSON answer entirely


# (request, index of this request) -> answer
Behaviour = Callable[[GraphRequest, int], Answer]


def template_problem(template: dict[str, Any]) -> str | None:
    """Why Meta would refuse this template send (unknown name, wrong counts), or None."""
    expected = TEMPLATES.get(str(template.get("name")))
    if expected is None:
        return "(#132001) Template name does not exist in the translation"
    components = template.get("components") or []
    bodies = [c for c in components if c.get("type") == "body"]
    variables = len(bodies[0].get("parameters", [])) if bodies else 0
    buttons = sum(1 for c in components if c.get("type") == "button")
    if (variables, buttons) != expected:
        return (
            f"(#132000) Number of parameters does not match the expected number of params "
            f"(got {variables} variables and {buttons} buttons, expected {expected})"
        )
    return None


def succeed(_request: GraphRequest, _index: int) -> Answer:
    return Answer()


def sequence(*answers: Answer) -> Behaviour:
    """The n-th request gets the n-th answer; later ones get the last."""
    return lambda _r, index: answers[min(index, len(answers) - 1)]


def graph_error(code: int, message: str = "error") -> dict[str, Any]:
    kind = "OAuthException" if code in (100, 190) else "GraphMethodException"
    return {
        "error": {
            "message": message,
            "type": kind,
            "code": code,
            "fbtrace_id": secrets.token_urlsafe(12),
        }
    }


@dataclass
class GraphApi:
    phone_number_id: str = "106540352242922"
    token: str = "EAAG-test-token"
    base_path: str = f"/{VERSION}"
    behaviour: Behaviour = succeed
    port: int = field(default_factory=free_port)
    requests: list[RecordedRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._server: RecordingServer | None = None

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.base_path}"

    @property
    def messages_path(self) -> str:
        return f"{self.base_path}/{self.phone_number_id}/messages"

    def check(self, request: GraphRequest) -> str | None:
        """Why Meta would reject this request before looking at it, or None."""
        if request.path != self.messages_path:
            return "Unknown path components"
        if request.authorization != f"Bearer {self.token}":
            return "Invalid OAuth access token"
        if not request.content_type.startswith("application/json"):
            return "Content-Type must be application/json"
        try:
            body = request.json()
        except ValueError:
            return "Invalid JSON"
        if body.get("messaging_product") != "whatsapp":
            return "messaging_product must be whatsapp"
        if body.get("recipient_type", "individual") != "individual":
            return "recipient_type must be individual"
        to = body.get("to")
        if not isinstance(to, str) or not to.isdigit():
            return "to must be digits"
        kind = body.get("type")
        if kind not in ENVELOPE_TYPES or not isinstance(body.get(kind), dict):
            return "type and its object are required"
        if kind == "template":
            return template_problem(body["template"])
        return None

    def respond(self, request: RecordedRequest, index: int) -> Response:
        problem = self.check(request)
        if problem is not None:
            status = 401 if "OAuth" in problem else 400
            code = 190 if status == 401 else 132000 if "132000" in problem else 100
            return Response(status, json.dumps(graph_error(code, problem)).encode(), {})
        answer = self.behaviour(request, index)
        headers = {"Retry-After": answer.retry_after} if answer.retry_after else {}
        if answer.raw_body is not None:
            payload = answer.raw_body
        elif answer.status == 200:
            to = request.json()["to"]
            payload = json.dumps(
                {
                    "messaging_product": "whatsapp",
                    "contacts": [{"input": to, "wa_id": to}],
                    "messages": [{"id": "wamid." + secrets.token_urlsafe(24)}],
                }
            ).encode()
        else:
            payload = json.dumps(graph_error(answer.code or 1)).encode()
        return Response(answer.status, payload, headers, delay=answer.delay)

    def start(self) -> GraphApi:
        self._server = RecordingServer(self.port, self.requests, self.respond)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None


# --- inbound webhooks, shaped as Meta documents them -------------------------------------

WABA_ID = "102290129340398"
DISPLAY_NUMBER = "15550783881"


def webhook(value_items: dict[str, Any], phone_number_id: str = "106540352242922") -> bytes:
    """One ``whatsapp_business_account`` notification with one ``messages`` change."""
    value = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": DISPLAY_NUMBER, "phone_number_id": phone_number_id},
        **value_items,
    }
    body = {
        "object": "whatsapp_business_account",
        "entry": [{"id": WABA_ID, "changes": [{"value": value, "field": "messages"}]}],
    }
    return json.dumps(body).encode()


def _message(sender: str, timestamp: int, kind: str, extra: dict[str, Any]) -> dict[str, Any]:
    digits = sender.removeprefix("+")
    return {
        "contacts": [{"profile": {"name": "Ada"}, "wa_id": digits}],
        "messages": [
            {
                "from": digits,
                "id": "wamid." + secrets.token_urlsafe(24),
                "timestamp": str(timestamp),
                "type": kind,
                **extra,
            }
        ],
    }


def inbound_text(sender: str, text: str, timestamp: int = 1_700_000_000) -> bytes:
    return webhook(_message(sender, timestamp, "text", {"text": {"body": text}}))


def inbound_button(
    sender: str,
    button_id: str,
    title: str,
    timestamp: int = 1_700_000_000,
    context: str = "wamid.ctx",
) -> bytes:
    """A tapped reply button; ``context`` is the id of our message that carried it."""
    interactive = {"type": "button_reply", "button_reply": {"id": button_id, "title": title}}
    extra = {"context": {"from": DISPLAY_NUMBER, "id": context}, "interactive": interactive}
    return webhook(_message(sender, timestamp, "interactive", extra))


def inbound_list(
    sender: str, row_id: str, title: str, description: str = "", timestamp: int = 1_700_000_000
) -> bytes:
    reply = {"id": row_id, "title": title, "description": description}
    extra = {"interactive": {"type": "list_reply", "list_reply": reply}}
    return webhook(_message(sender, timestamp, "interactive", extra))


def inbound_template_button(
    sender: str, payload: str, text: str, timestamp: int = 1_700_000_000
) -> bytes:
    extra = {
        "context": {"from": DISPLAY_NUMBER, "id": "wamid.ctx"},
        "button": {"payload": payload, "text": text},
    }
    return webhook(_message(sender, timestamp, "button", extra))


def status(
    wamid: str,
    value: str,
    recipient: str = "2348031234567",
    timestamp: int = 1_700_000_000,
    error_code: int | None = None,
) -> bytes:
    item: dict[str, Any] = {
        "id": wamid,
        "status": value,
        "timestamp": str(timestamp),
        "recipient_id": recipient.removeprefix("+"),
    }
    if value in ("sent", "delivered"):
        item["pricing"] = {"billable": True, "pricing_model": "CBP", "category": "utility"}
    if error_code is not None:
        item["errors"] = [{"code": error_code, "title": "Message undeliverable."}]
    return webhook({"statuses": [item]})


def signed_headers(app_secret: str, body: bytes) -> dict[str, str]:
    """The headers Meta sends: X-Hub-Signature-256 = sha256=<hex HMAC of the raw body>."""
    digest = hmac.new(app_secret.encode(), body, hashlib.sha256).hexdigest()
    return {"Content-Type": "application/json", "X-Hub-Signature-256": f"sha256={digest}"}
