"""The yardstick: a bare Starlette JSON endpoint with no database, served like rehabref."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


async def ping(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok", "service": "yardstick"})


app = Starlette(routes=[Route("/ping", ping)])
