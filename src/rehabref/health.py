"""Liveness and readiness probes."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get

from rehabref.services import services_of


@get("/healthz", include_in_schema=False)
async def healthz() -> Response[bytes]:
    return Response(content=b'{"status":"ok"}', media_type="application/json")


@get("/readyz", include_in_schema=False)
async def readyz(request: Request[Any, Any, Any]) -> Response[bytes]:
    if await services_of(request).db.ping():
        return Response(content=b'{"status":"ready"}', media_type="application/json")
    return Response(
        content=b'{"status":"database unavailable"}', status_code=503, media_type="application/json"
    )


ROUTES = [healthz, readyz]
