"""JSON answers of the API: one encoder (msgspec) and one media type for every endpoint."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Response

JSON = "application/json"


def json_response(
    content: Any, status: int = 200, headers: dict[str, str] | None = None
) -> Response[bytes]:
    return Response(
        content=msgspec.json.encode(content), status_code=status, media_type=JSON, headers=headers
    )
