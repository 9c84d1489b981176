"""The one router of every JSON API route (partner and ops), as plain ASGI in front of Litestar.

Litestar's per-request machinery (routing, its Request and Response objects, its middleware
stack) measured about a third of a retrieve's CPU and a fifth of a create's
(docs/performance.md), so every JSON route is dispatched here, with one small request type
(``PlainRequest``), to endpoint functions that return ``Response`` objects. Litestar serves
only the HTML pages (console, patient pages, /docs); every path not routed here goes on to it.

Errors keep the spec's error body: ``ApiError`` and unexpected exceptions are answered with
the same handlers Litestar uses, a known path with another method is a 405 with ``Allow``,
and ``OPTIONS`` lists the path's methods.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast
from urllib.parse import parse_qsl

from litestar import Litestar, Response
from litestar.enums import ScopeType
from litestar.types import HTTPScope, Receive, Scope, Send

from rehabref.errors import ApiError, error_response, handle_unexpected
from rehabref.responses import send_response

Handler = Callable[..., Awaitable[Response[bytes]]]
# Called after a route declared with ``audit`` answered with success, before the answer is
# sent: (request, the route's audit action, the path parameters). Wired at start-up (app.py).
AuditHook = Callable[["PlainRequest", str, Mapping[str, str]], Awaitable[None]]


@dataclass(frozen=True)
class PlainRoute:
    """``path`` segments are literal or ``{name}``; each ``{name}`` is passed to the handler by
    name (a non-empty segment, never containing ``/``)."""

    method: str
    path: str
    handler: Handler
    # False for routes that are not API operations (a signed document link).
    in_schema: bool = True
    # A read of patient data: the audit action recorded after each successful answer
    # (``rehabref.audit``); changes record theirs in their own transaction instead.
    audit: str | None = None


@dataclass(frozen=True)
class Client:
    host: str
    port: int


class ClientDisconnected(Exception):
    """The client went away before sending the whole body; nothing is answered."""


class PlainRequest:
    """What the endpoint functions read from a request; the same names as Litestar's."""

    __slots__ = ("_body", "_query", "app", "headers", "max_body", "receive", "scope")

    def __init__(self, scope: Scope, receive: Receive, app: Litestar, max_body: int) -> None:
        self.scope = scope
        self.receive = receive
        self.app = app
        self.max_body = max_body
        headers: dict[str, str] = {}
        for name, value in scope["headers"]:
            # The first of repeated headers wins, as with Litestar's Request.headers.
            headers.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
        self.headers: Mapping[str, str] = headers
        self._query: dict[str, str] | None = None
        self._body: bytes | None = None

    @property
    def client(self) -> Client | None:
        peer = self.scope.get("client")
        return Client(peer[0], peer[1]) if peer else None

    @property
    def query_params(self) -> Mapping[str, str]:
        if self._query is None:
            raw = self.scope.get("query_string", b"").decode("latin-1")
            query: dict[str, str] = {}
            for name, value in parse_qsl(raw, keep_blank_values=True):
                query.setdefault(name, value)
            self._query = query
        return self._query

    async def body(self) -> bytes:
        """The whole body; over ``max_body`` bytes is a 413 before reading further."""
        if self._body is not None:
            return self._body
        declared = self.headers.get("content-length", "")
        if declared.isascii() and declared.isdigit() and int(declared) > self.max_body:
            raise _too_large()
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                raise ClientDisconnected
            chunk = cast(bytes, message.get("body", b""))
            size += len(chunk)
            if size > self.max_body:
                raise _too_large()
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        self._body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        return self._body


def _too_large() -> ApiError:
    return ApiError(413, "payload_too_large")


@dataclass
class _PathRoutes:
    template: str
    segments: tuple[str | None, ...]  # a literal, or None for a parameter
    params: tuple[str, ...]
    handlers: dict[str, Handler]
    audits: dict[str, str]

    @property
    def allow(self) -> str:
        return ", ".join(sorted({*self.handlers, "OPTIONS"}))


class PlainRouter:
    """ASGI app: serves ``routes`` itself and hands every other request to ``app``.

    Paths without parameters are one dictionary lookup; the others are matched segment by
    segment among the templates of the same length, most literal segments first.
    """

    def __init__(
        self,
        app: Litestar,
        routes: Sequence[PlainRoute],
        *,
        max_body: int,
        audit: AuditHook | None = None,
    ) -> None:
        self.app = app
        self.max_body = max_body
        self._audit = audit
        self._exact: dict[str, _PathRoutes] = {}
        self._by_length: dict[int, list[_PathRoutes]] = {}
        templates: dict[str, _PathRoutes] = {}
        for route in routes:
            entry = templates.get(route.path)
            if entry is None:
                parts = route.path.split("/")
                segments = tuple(None if _is_param(part) else part for part in parts)
                params = tuple(part[1:-1] for part in parts if _is_param(part))
                entry = templates[route.path] = _PathRoutes(route.path, segments, params, {}, {})
                if params:
                    self._by_length.setdefault(len(segments), []).append(entry)
                else:
                    self._exact[route.path] = entry
            entry.handlers[route.method] = route.handler
            if route.audit is not None:
                if audit is None:
                    raise ValueError(f"{route.path} is audited: the router needs an audit hook")
                entry.audits[route.method] = route.audit
        for candidates in self._by_length.values():
            candidates.sort(key=lambda e: sum(s is not None for s in e.segments), reverse=True)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == ScopeType.HTTP:
            found = self._match(scope["path"])
            if found is not None:
                entry, params = found
                await self._serve(entry, params, scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _match(self, path: str) -> tuple[_PathRoutes, dict[str, str]] | None:
        if len(path) > 1 and path.endswith("/"):
            path = path[:-1]
        entry = self._exact.get(path)
        if entry is not None:
            return entry, {}
        parts = path.split("/")
        for candidate in self._by_length.get(len(parts), ()):
            values: list[str] = []
            for literal, part in zip(candidate.segments, parts, strict=True):
                if literal is None:
                    if not part:
                        break
                    values.append(part)
                elif literal != part:
                    break
            else:
                return candidate, dict(zip(candidate.params, values, strict=True))
        return None

    async def _serve(
        self,
        entry: _PathRoutes,
        params: dict[str, str],
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        scope["path_template"] = entry.template
        scope.setdefault("state", {})
        request = PlainRequest(scope, receive, self.app, self.max_body)
        method = cast(HTTPScope, scope)["method"]
        handler = entry.handlers.get(method)
        try:
            if handler is not None:
                response = await handler(request, **params)
                action = entry.audits.get(method)
                succeeded = (response.status_code or 200) < 400
                if action is not None and self._audit is not None and succeeded:
                    # Before the answer leaves: no patient data is sent unrecorded.
                    await self._audit(request, action, params)
            elif method == "OPTIONS":
                response = Response(content=b"", status_code=204, headers={"Allow": entry.allow})
            else:
                raise ApiError(405, headers={"Allow": entry.allow})
        except ApiError as exc:
            response = error_response(request, exc)
        except ClientDisconnected:
            return
        except Exception as exc:
            response = handle_unexpected(request, exc)
        await send_response(response, send)


def _is_param(segment: str) -> bool:
    return len(segment) > 2 and segment.startswith("{") and segment.endswith("}")
