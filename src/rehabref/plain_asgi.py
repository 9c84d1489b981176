"""The one router of every JSON API route (partner and ops), as plain ASGI in front of Litestar.

Litestar's per-request machinery (routing, its Request and Response objects, its middleware
stack) measured about a third of a retrieve's CPU and a fifth of a create's
(docs/performance.md), so every JSON route is dispatched here, with one small request type
(``PlainRequest``), to endpoint functions that return ``Response`` objects. Litestar serves
only the HTML pages (console, patient pages, /docs); every path not routed here goes on to it.

Each route declares how its caller is authenticated (``auth``): a ``RouteAuth`` kind, whose
``Authentication`` the router is given at start-up (app.py), or ``PUBLIC`` for routes that
check their own credential (a provider's signature). The router authenticates once, before the
handler, and passes the resolved principal to the handler as its second argument.

Errors keep the spec's error body: ``ApiError`` and unexpected exceptions are answered with
the same handlers Litestar uses, a known path with another method is a 405 with ``Allow``,
and ``OPTIONS`` lists the path's methods.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Concatenate, Final, Generic, Protocol, TypeVar, cast, final, overload
from urllib.parse import parse_qsl

from litestar import Litestar, Response
from litestar.enums import ScopeType
from litestar.types import HTTPScope, Receive, Scope, Send

from rehabref.errors import ApiError, error_response, handle_unexpected
from rehabref.responses import send_response

Handler = Callable[..., Awaitable[Response[bytes]]]


class Actor(Protocol):
    """A resolved principal: who the audit trail says read."""

    @property
    def actor(self) -> str: ...


PrincipalT = TypeVar("PrincipalT", bound=Actor)
PrincipalT_co = TypeVar("PrincipalT_co", bound=Actor, covariant=True)


@dataclass(frozen=True, eq=False)
class RouteAuth(Generic[PrincipalT]):
    """A kind of caller a route accepts (a partner's secret key, an operator...); the
    principal it resolves to is ``PrincipalT``. Compared by identity."""

    name: str


@final
class Public:
    """The route checks its own credential (a provider's signature) or needs none."""


PUBLIC: Final = Public()


class Authenticate(Protocol[PrincipalT_co]):
    """Resolves the caller from the request and the path parameters (a signed link's token),
    or raises the ``ApiError`` to answer (401, 403, 429)."""

    async def __call__(
        self, request: PlainRequest, params: Mapping[str, str], /
    ) -> PrincipalT_co: ...


@dataclass(frozen=True)
class Authentication(Generic[PrincipalT]):
    """How the router resolves a ``RouteAuth`` kind: given to it at start-up (app.py)."""

    auth: RouteAuth[PrincipalT]
    authenticate: Authenticate[PrincipalT]


# Called after a route declared with ``audit`` answered with success, before the answer is
# sent: (request, the resolved principal, the route's audit action, the path parameters).
# Wired at start-up (app.py).
AuditHook = Callable[["PlainRequest", Actor, str, Mapping[str, str]], Awaitable[None]]


class PlainRoute:
    """``path`` segments are literal or ``{name}``; each ``{name}`` is passed to the handler by
    name (a non-empty segment, never containing ``/``). An authenticated route's handler takes
    the request and the resolved principal first; a ``PUBLIC`` route's, the request only."""

    __slots__ = ("audit", "auth", "handler", "in_schema", "method", "path")

    @overload
    def __init__(
        self,
        method: str,
        path: str,
        handler: Callable[Concatenate[PlainRequest, PrincipalT, ...], Awaitable[Response[bytes]]],
        *,
        auth: RouteAuth[PrincipalT],
        in_schema: bool = True,
        audit: str | None = None,
    ) -> None: ...

    @overload
    def __init__(
        self,
        method: str,
        path: str,
        handler: Callable[Concatenate[PlainRequest, ...], Awaitable[Response[bytes]]],
        *,
        auth: Public,
        in_schema: bool = True,
    ) -> None: ...

    def __init__(
        self,
        method: str,
        path: str,
        handler: Handler,
        *,
        auth: RouteAuth[Any] | Public,
        in_schema: bool = True,
        audit: str | None = None,
    ) -> None:
        self.method = method
        self.path = path
        self.handler = handler
        self.auth = auth
        # False for routes that are not API operations (a signed document link).
        self.in_schema = in_schema
        # A read of patient data: the audit action recorded after each successful answer
        # (``rehabref.audit``), naming the principal; changes record theirs in their own
        # transaction instead. Only authenticated routes can be audited (no one to name).
        self.audit = audit

    def __repr__(self) -> str:
        return f"PlainRoute({self.method} {self.path})"


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


@dataclass(frozen=True)
class _Endpoint:
    handler: Handler
    authenticate: Authenticate[Actor] | None  # None: a PUBLIC route
    audit: str | None


@dataclass
class _PathRoutes:
    template: str
    segments: tuple[str | None, ...]  # a literal, or None for a parameter
    params: tuple[str, ...]
    endpoints: dict[str, _Endpoint]

    @property
    def allow(self) -> str:
        return ", ".join(sorted({*self.endpoints, "OPTIONS"}))


class PlainRouter:
    """ASGI app: serves ``routes`` itself and hands every other request to ``app``.

    Paths without parameters are one dictionary lookup; the others are matched segment by
    segment among the templates of the same length, most literal segments first. Every
    route's ``RouteAuth`` needs its ``Authentication`` among ``authentications``.
    """

    def __init__(
        self,
        app: Litestar,
        routes: Sequence[PlainRoute],
        *,
        max_body: int,
        authentications: Sequence[Authentication[Any]] = (),
        audit: AuditHook | None = None,
    ) -> None:
        self.app = app
        self.max_body = max_body
        self._audit = audit
        self._exact: dict[str, _PathRoutes] = {}
        self._by_length: dict[int, list[_PathRoutes]] = {}
        authenticators: dict[RouteAuth[Any], Authenticate[Actor]] = {
            a.auth: a.authenticate for a in authentications
        }
        templates: dict[str, _PathRoutes] = {}
        for route in routes:
            entry = templates.get(route.path)
            if entry is None:
                parts = route.path.split("/")
                segments = tuple(None if _is_param(part) else part for part in parts)
                params = tuple(part[1:-1] for part in parts if _is_param(part))
                entry = templates[route.path] = _PathRoutes(route.path, segments, params, {})
                if params:
                    self._by_length.setdefault(len(segments), []).append(entry)
                else:
                    self._exact[route.path] = entry
            entry.endpoints[route.method] = _endpoint(route, authenticators, audit)
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
        endpoint = entry.endpoints.get(method)
        try:
            if endpoint is not None:
                response = await _answer(endpoint, request, params, self._audit)
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


def _endpoint(
    route: PlainRoute,
    authenticators: Mapping[RouteAuth[Any], Authenticate[Actor]],
    audit: AuditHook | None,
) -> _Endpoint:
    where = f"{route.method} {route.path}"
    authenticate = None
    if isinstance(route.auth, RouteAuth):
        authenticate = authenticators.get(route.auth)
        if authenticate is None:
            raise ValueError(f"{where}: no authentication given for {route.auth.name!r}")
    if route.audit is not None:
        if authenticate is None:
            raise ValueError(f"{where} is audited: it needs an authenticated principal")
        if audit is None:
            raise ValueError(f"{where} is audited: the router needs an audit hook")
    return _Endpoint(route.handler, authenticate, route.audit)


async def _answer(
    endpoint: _Endpoint,
    request: PlainRequest,
    params: Mapping[str, str],
    audit: AuditHook | None,
) -> Response[bytes]:
    """The route's one authentication step, its handler, and the audit record of its read."""
    if endpoint.authenticate is None:
        return await endpoint.handler(request, **params)
    principal = await endpoint.authenticate(request, params)
    response = await endpoint.handler(request, principal, **params)
    succeeded = (response.status_code or 200) < 400
    if endpoint.audit is not None and audit is not None and succeeded:
        # Before the answer leaves: no patient data is sent unrecorded.
        await audit(request, principal, endpoint.audit, params)
    return response


def _is_param(segment: str) -> bool:
    return len(segment) > 2 and segment.startswith("{") and segment.endswith("}")
