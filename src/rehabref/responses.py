"""JSON answers of the API: one encoder (msgspec) and one media type for every endpoint, and
one way to send an answer outside Litestar (the plain routes, the NUL-in-URL refusal)."""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec
from litestar import Response
from litestar.types import HTTPResponseBodyEvent, HTTPResponseStartEvent, Send

JSON = "application/json"


class AnswerUnion:
    """A marker naming a union of answer Structs, e.g. "a V1 or a Shape G record": the Structs
    subclass it (the static type) and the module defining them lists them in ``alternatives``
    (what the document says). msgspec describes no untagged union of Structs, so the OpenAPI
    document writes the marker as ``anyOf`` its alternatives (``openapi/answers.py``); encoding
    needs nothing, a Struct is written as itself.

    ``described_elsewhere`` names further alternatives that are components of the document
    but no answer Struct (the Pydantic ``ErrorBody``); they follow the Structs in ``anyOf``."""

    __slots__ = ()
    alternatives: ClassVar[tuple[type[Any], ...]] = ()
    described_elsewhere: ClassVar[tuple[str, ...]] = ()


def json_response(
    content: Any, status: int = 200, headers: dict[str, str] | None = None
) -> Response[bytes]:
    return Response(
        content=msgspec.json.encode(content), status_code=status, media_type=JSON, headers=headers
    )


async def send_response(response: Response[bytes], send: Send) -> None:
    """Send a ``Response`` straight to the ASGI server (outside Litestar's routing)."""
    body = response.content if isinstance(response.content, bytes) else b""
    headers: list[tuple[bytes, bytes]] = [(b"content-length", str(len(body)).encode())]
    if body:
        media_type = getattr(response.media_type, "value", response.media_type)
        headers.append((b"content-type", str(media_type).encode("latin-1")))
    headers.extend(
        (name.lower().encode("latin-1"), value.encode("latin-1"))
        for name, value in response.headers.items()
    )
    start: HTTPResponseStartEvent = {
        "type": "http.response.start",
        "status": response.status_code or 200,
        "headers": headers,
    }
    await send(start)
    end: HTTPResponseBodyEvent = {"type": "http.response.body", "body": body, "more_body": False}
    await send(end)
