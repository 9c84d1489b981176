"""The hottest partner routes served as plain ASGI, in front of Litestar.

Referral create, retrieve and list carry most partner traffic. Litestar's per-request
machinery (routing, its Request and Response objects, its middleware stack) measured about a
third of a retrieve's CPU and a fifth of a create's (docs/performance.md), so these routes
are dispatched here, with a small request object, to endpoint functions that return the same
``Response`` objects as Litestar handlers. Every other path goes on to Litestar unchanged.

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


@dataclass(frozen=True)
class PlainRoute:
    """``path`` is exact, or ends in one ``{name}`` segment passed to the handler by name."""

    method: str
    path: str
    handler: Handler


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
    handlers: dict[str, Handler]
    param: str | None

    @property
    def allow(self) -> str:
        return ", ".join(sorted({*self.handlers, "OPTIONS"}))


class PlainRouter:
    """ASGI app: serves ``routes`` itself and hands every other request to ``app``."""

    def __init__(self, app: Litestar, routes: Sequence[PlainRoute], *, max_body: int) -> None:
        self.app = app
        self.max_body = max_body
        self._exact: dict[str, _PathRoutes] = {}
        self._prefixed: dict[str, _PathRoutes] = {}
        for route in routes:
            head, _, last = route.path.rpartition("/")
            if last.startswith("{") and last.endswith("}"):
                table, key, param = self._prefixed, head + "/", last[1:-1]
            else:
                table, key, param = self._exact, route.path, None
            entry = table.setdefault(key, _PathRoutes(route.path, {}, param))
            entry.handlers[route.method] = route.handler

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
        head, _, last = path.rpartition("/")
        entry = self._prefixed.get(head + "/")
        if entry is not None and last and entry.param is not None:
            return entry, {entry.param: last}
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
