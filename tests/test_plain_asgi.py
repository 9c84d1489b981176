"""PlainRouter: its routes are served without Litestar, with the spec's error answers; every
other request passes through untouched."""

from __future__ import annotations

import json
from typing import Any

from litestar import Response

from rehabref.errors import ApiError
from rehabref.plain_asgi import PUBLIC, PlainRequest, PlainRoute, PlainRouter


async def echo(request: PlainRequest, **params: str) -> Response[bytes]:
    body = await request.body()
    content = {"params": params, "query": dict(request.query_params), "size": len(body)}
    return Response(content=json.dumps(content).encode(), media_type="application/json")


async def refuse(request: PlainRequest) -> Response[bytes]:
    raise ApiError(409, "conflict", "No.", headers={"X-Why": "test"})


async def crash(request: PlainRequest) -> Response[bytes]:
    raise RuntimeError("patient Amaka +2348031234567")


class Downstream:
    def __init__(self) -> None:
        self.paths: list[str] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.paths.append(scope["path"])
        await send({"type": "http.response.start", "status": 299, "headers": []})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def make_router() -> tuple[PlainRouter, Downstream]:
    downstream = Downstream()
    routes = [
        PlainRoute("POST", "/items", echo, auth=PUBLIC),
        PlainRoute("GET", "/items", echo, auth=PUBLIC),
        PlainRoute("GET", "/items/{item_id}", echo, auth=PUBLIC),
        PlainRoute("PUT", "/refuse", refuse, auth=PUBLIC),
        PlainRoute("GET", "/crash", crash, auth=PUBLIC),
    ]
    return PlainRouter(downstream, routes, max_body=100), downstream  # type: ignore[arg-type]


async def call(
    router: PlainRouter,
    method: str,
    path: str,
    *,
    chunks: tuple[bytes, ...] = (b"",),
    query: bytes = b"",
    headers: list[tuple[bytes, bytes]] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    pending = list(chunks)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        chunk = pending.pop(0)
        return {"type": "http.request", "body": chunk, "more_body": bool(pending)}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "query_string": query,
        "headers": headers or [],
        "state": {"request_id": "req_test"},
    }
    await router(scope, receive, send)  # type: ignore[arg-type]
    start, body = sent[0], sent[1]
    names = {k.decode(): v.decode() for k, v in start["headers"]}
    return start["status"], names, body["body"]


async def test_exact_and_parameter_routes_are_served_with_their_template():
    router, downstream = make_router()
    status, headers, body = await call(
        router, "GET", "/items/itm_1", query=b"a=1&a=2&b=%F0%9F%99%82"
    )
    assert status == 200 and headers["content-type"] == "application/json"
    assert json.loads(body) == {
        "params": {"item_id": "itm_1"},
        "query": {"a": "1", "b": "🙂"},
        "size": 0,
    }
    assert (await call(router, "GET", "/items/"))[0] == 200  # trailing slash: the list
    assert downstream.paths == []


async def test_other_paths_pass_through():
    router, downstream = make_router()
    assert (await call(router, "GET", "/elsewhere"))[0] == 299
    assert (await call(router, "GET", "/items/a/b"))[0] == 299
    assert downstream.paths == ["/elsewhere", "/items/a/b"]


async def test_wrong_method_is_405_with_allow_and_options_lists_methods():
    router, _ = make_router()
    status, headers, body = await call(router, "DELETE", "/items")
    assert status == 405 and headers["allow"] == "GET, OPTIONS, POST"
    error = json.loads(body)["error"]
    assert error["code"] == "method_not_allowed" and error["request_id"] == "req_test"
    status, headers, body = await call(router, "OPTIONS", "/items/x")
    assert (status, headers["allow"], body) == (204, "GET, OPTIONS", b"")


async def test_bodies_over_the_limit_are_413_declared_or_streamed():
    router, _ = make_router()
    declared = [(b"content-length", b"101")]
    assert (await call(router, "POST", "/items", headers=declared))[0] == 413
    status, _, body = await call(router, "POST", "/items", chunks=(b"x" * 60, b"x" * 60))
    assert status == 413 and json.loads(body)["error"]["code"] == "payload_too_large"
    status, _, body = await call(router, "POST", "/items", chunks=(b"x" * 50, b"x" * 50))
    assert status == 200 and json.loads(body)["size"] == 100


async def test_api_errors_keep_their_headers_and_crashes_are_500_without_details():
    router, _ = make_router()
    status, headers, body = await call(router, "PUT", "/refuse")
    assert (status, headers["x-why"], json.loads(body)["error"]["code"]) == (
        409,
        "test",
        "conflict",
    )
    status, _, body = await call(router, "GET", "/crash")
    assert status == 500 and json.loads(body)["error"]["code"] == "internal_error"
    assert b"Amaka" not in body and b"+234" not in body


async def test_parameters_in_any_segment_and_literals_win_over_parameters():
    downstream = Downstream()
    routes = [
        PlainRoute("POST", "/things/{thing_id}/moves", echo, auth=PUBLIC),
        PlainRoute("GET", "/things/{thing_id}/parts/{part_id}", echo, auth=PUBLIC),
        PlainRoute("GET", "/things/special/moves", refuse, auth=PUBLIC),
        PlainRoute("GET", "/things/{thing_id}", echo, auth=PUBLIC),
    ]
    router = PlainRouter(downstream, routes, max_body=100)  # type: ignore[arg-type]
    status, _, body = await call(router, "POST", "/things/t1/moves")
    assert status == 200 and json.loads(body)["params"] == {"thing_id": "t1"}
    status, _, body = await call(router, "GET", "/things/t1/parts/p9")
    assert status == 200 and json.loads(body)["params"] == {"thing_id": "t1", "part_id": "p9"}
    # The literal route wins over the parameter route of the same shape.
    assert (await call(router, "GET", "/things/special/moves"))[0] == 409
    # Same shape, other method: 405 with the methods of the matched template.
    status, headers, _ = await call(router, "GET", "/things/t1/moves")
    assert status == 405 and headers["allow"] == "OPTIONS, POST"
    # An empty parameter segment matches nothing here: it goes on to the next app.
    assert (await call(router, "POST", "/things//moves"))[0] == 299
    assert downstream.paths == ["/things//moves"]


async def test_the_first_of_repeated_headers_and_the_client_address_are_available():
    seen: dict[str, Any] = {}

    async def look(request: PlainRequest) -> Response[bytes]:
        seen["first"] = request.headers["x-forwarded-for"]
        seen["client"] = request.client
        return Response(content=b"{}", media_type="application/json")

    router = PlainRouter(
        Downstream(), [PlainRoute("GET", "/look", look, auth=PUBLIC)], max_body=100
    )  # type: ignore[arg-type]
    headers = [(b"X-Forwarded-For", b"10.0.0.1"), (b"x-forwarded-for", b"10.0.0.2")]
    assert (await call(router, "GET", "/look", headers=headers))[0] == 200
    assert seen["first"] == "10.0.0.1"
    assert seen["client"] is None  # the test scope has no client
