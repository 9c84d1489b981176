"""Outermost ASGI layer: request id, access log line, and log context for each request, and
the headers every response carries."""

from __future__ import annotations

import itertools
import re
import secrets
import time
from collections.abc import Sequence
from typing import Any

from litestar import Response
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from rehabref.errors import error_body
from rehabref.logging import access_log, partner_id_var, request_id_var
from rehabref.responses import JSON, send_response

# A partner's trace id is echoed only if it is short and plain; otherwise we make our own.
_VALID_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")


class RequestContextMiddleware:
    def __init__(self, app: ASGIApp, headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
        """``headers``: added to every response (``transport_security.response_headers``)."""
        self.app = app
        self.headers = tuple(headers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        incoming_id = _incoming_request_id(scope)
        request_id = incoming_id or _next_request_id()
        state: dict[str, Any] = scope.setdefault("state", {})
        state["request_id"] = request_id
        request_token = request_id_var.set(request_id)
        partner_token = partner_id_var.set(None)
        started = time.perf_counter()
        status_holder = [500]
        header = (b"x-request-id", request_id.encode())
        always = self.headers

        api_path = scope["path"].startswith(("/api/", "/v1/"))

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                status_holder[0] = message["status"]
                headers = list(message.get("headers", []))
                headers.append(header)
                headers.extend(always)
                for name, value in state.get("rate_limit_headers", {}).items():
                    headers.append((name.lower().encode(), value.encode()))
                # API answers carry patient and commercial data: no shared or browser caching.
                if api_path and not any(name.lower() == b"cache-control" for name, _ in headers):
                    headers.append(NO_STORE)
                message["headers"] = headers
            await send(message)

        try:
            if _has_nul(scope):
                # NUL never belongs in a URL, and PostgreSQL text cannot hold it (would be a 500).
                await _malformed_url(send_with_id, request_id)
            else:
                await self.app(scope, receive, send_with_id)
        finally:
            access_log.write(
                request_id=request_id,
                partner_supplied_id=incoming_id is not None,
                partner_id=state.get("partner_id"),
                method=scope.get("method"),
                # The route template, never the raw path: paths can carry patient tokens.
                route=scope.get("path_template") or "unmatched",
                status=status_holder[0],
                latency_ms=round((time.perf_counter() - started) * 1000, 2),
            )
            request_id_var.reset(request_token)
            partner_id_var.reset(partner_token)


NO_STORE = (b"cache-control", b"no-store")
_PROCESS_TAG = secrets.token_hex(11)
_sequence = itertools.count(1)


def _next_request_id() -> str:
    # Unique, not secret: a random per-process tag and a counter (cheaper than uuid4).
    return f"req_{_PROCESS_TAG}{next(_sequence):010x}"


def _incoming_request_id(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"x-request-id":
            text = value.decode("latin-1").strip()
            return text if _VALID_REQUEST_ID.match(text) else None
    return None


def _has_nul(scope: Scope) -> bool:
    query: bytes = scope.get("query_string", b"")
    return "\x00" in scope.get("path", "") or b"%00" in query or b"\x00" in query


async def _malformed_url(send: Send, request_id: str) -> None:
    body = error_body(
        code="malformed_request",
        message="The URL contains a NUL character.",
        fields={},
        request_id=request_id,
    )
    await send_response(Response(content=body, status_code=400, media_type=JSON), send)
