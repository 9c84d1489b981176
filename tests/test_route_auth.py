"""PlainRouter's one authentication step: each route's kind is resolved once, before the
handler, which gets the principal; its error is the answer; the audit hook gets the principal."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from litestar import Response

from rehabref.errors import ApiError
from rehabref.plain_asgi import (
    PUBLIC,
    Actor,
    Authentication,
    PlainRequest,
    PlainRoute,
    PlainRouter,
    RouteAuth,
)
from tests.test_plain_asgi import Downstream, call


@dataclass(frozen=True)
class Caller:
    name: str

    @property
    def actor(self) -> str:
        return f"caller:{self.name}"


CALLER: RouteAuth[Caller] = RouteAuth("test caller")
UNWIRED: RouteAuth[Caller] = RouteAuth("never given to the router")


class CountingAuthenticate:
    """Accepts ``Bearer good``; anything else is the 401 an authenticator raises."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, request: PlainRequest, params: Mapping[str, str]) -> Caller:
        self.calls += 1
        if request.headers.get("authorization") != "Bearer good":
            raise ApiError(401, "unauthenticated", "Missing or invalid key.")
        return Caller("ada")


class Recorded:
    def __init__(self) -> None:
        self.handled: list[tuple[Caller, dict[str, str]]] = []
        self.audited: list[tuple[str, str, dict[str, str]]] = []

    async def handler(
        self, request: PlainRequest, caller: Caller, **params: str
    ) -> Response[bytes]:
        self.handled.append((caller, params))
        status = 404 if params.get("item_id") == "missing" else 200
        return Response(content=b"{}", media_type="application/json", status_code=status)

    async def audit(
        self, request: PlainRequest, principal: Actor, action: str, params: Mapping[str, str]
    ) -> None:
        self.audited.append((principal.actor, action, dict(params)))


async def public(request: PlainRequest) -> Response[bytes]:
    return Response(content=b"{}", media_type="application/json")


def make_router() -> tuple[PlainRouter, CountingAuthenticate, Recorded]:
    authenticate = CountingAuthenticate()
    recorded = Recorded()
    routes = [
        PlainRoute("GET", "/items/{item_id}", recorded.handler, auth=CALLER, audit="item.read"),
        PlainRoute("POST", "/items/{item_id}", recorded.handler, auth=CALLER),
        PlainRoute("GET", "/open", public, auth=PUBLIC),
    ]
    router = PlainRouter(
        Downstream(),  # type: ignore[arg-type]
        routes,
        max_body=100,
        authentications=[Authentication(CALLER, authenticate)],
        audit=recorded.audit,
    )
    return router, authenticate, recorded


GOOD = [(b"authorization", b"Bearer good")]


async def test_the_handler_gets_the_principal_resolved_once_and_the_audit_names_it():
    router, authenticate, recorded = make_router()
    status, _, _ = await call(router, "GET", "/items/itm_1", headers=GOOD)
    assert status == 200
    assert authenticate.calls == 1
    assert recorded.handled == [(Caller("ada"), {"item_id": "itm_1"})]
    assert recorded.audited == [("caller:ada", "item.read", {"item_id": "itm_1"})]


async def test_a_refused_caller_gets_the_authenticators_answer_and_no_handler_runs():
    router, authenticate, recorded = make_router()
    for headers in (None, [(b"authorization", b"Bearer bad")]):
        status, headers_out, body = await call(router, "POST", "/items/itm_1", headers=headers)
        error = json.loads(body)["error"]
        assert (status, error["code"], error["message"]) == (
            401,
            "unauthenticated",
            "Missing or invalid key.",
        )
        assert headers_out["content-type"] == "application/json"
    assert authenticate.calls == 2
    assert recorded.handled == [] and recorded.audited == []


async def test_unsuccessful_answers_are_not_audited():
    router, _, recorded = make_router()
    assert (await call(router, "GET", "/items/missing", headers=GOOD))[0] == 404
    assert len(recorded.handled) == 1 and recorded.audited == []


async def test_options_405_and_public_routes_do_not_authenticate():
    router, authenticate, _ = make_router()
    status, headers, _ = await call(router, "OPTIONS", "/items/itm_1")
    assert (status, headers["allow"]) == (204, "GET, OPTIONS, POST")
    assert (await call(router, "DELETE", "/items/itm_1"))[0] == 405
    assert (await call(router, "GET", "/open"))[0] == 200
    assert authenticate.calls == 0


def test_a_route_whose_kind_was_not_given_is_refused_at_start_up():
    recorded = Recorded()
    routes = [PlainRoute("GET", "/items/{item_id}", recorded.handler, auth=UNWIRED)]
    with pytest.raises(ValueError, match="never given to the router"):
        PlainRouter(Downstream(), routes, max_body=100)  # type: ignore[arg-type]


def test_a_public_route_cannot_be_audited():
    # The type checker refuses it (PUBLIC routes take no ``audit``); so does the router.
    route: Any = PlainRoute("GET", "/open", public, auth=PUBLIC)
    route.audit = "open.read"
    with pytest.raises(ValueError, match="needs an authenticated principal"):
        PlainRouter(Downstream(), [route], max_body=100, audit=Recorded().audit)  # type: ignore[arg-type]


async def test_a_read_whose_record_fails_is_a_500_without_the_handlers_answer():
    async def secret(request: PlainRequest, caller: Caller) -> Response[bytes]:
        return Response(content=b'{"patient":"Amaka"}', media_type="application/json")

    async def failing_audit(
        request: PlainRequest, principal: Actor, action: str, params: Mapping[str, str]
    ) -> None:
        raise OSError("the audit trail is unreachable")

    router = PlainRouter(
        Downstream(),  # type: ignore[arg-type]
        [PlainRoute("GET", "/secret", secret, auth=CALLER, audit="secret.read")],
        max_body=100,
        authentications=[Authentication(CALLER, CountingAuthenticate())],
        audit=failing_audit,
    )
    status, _, body = await call(router, "GET", "/secret", headers=GOOD)
    assert status == 500
    assert json.loads(body)["error"]["code"] == "internal_error"
    assert b"Amaka" not in body
