"""/docs: the interactive API reference (Swagger UI 5), with every asset served from here.

Threat: readers type API keys into this page ("Authorize", "Try it out"), so any script it
runs can read them. It runs only the files of the pinned ``swagger-ui-py`` package (installed
from PyPI with the service) and our ``reference.js``; no CDN, no inline script. The
Content-Security-Policy allows scripts, styles and fetches from this origin only (plus the
inline styles and ``data:`` images Swagger UI's React components use), and forbids framing.
Assets are an allow-list of file names, never a path taken from the URL.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import swagger_ui
from litestar import Response, get

from rehabref.errors import ApiError

_SWAGGER_DIR = Path(swagger_ui.__file__).parent / "static"
_OWN_DIR = Path(__file__).parent / "static"

# file name -> (directory, media type)
_ASSETS: dict[str, tuple[Path, str]] = {
    "swagger-ui-bundle.js": (_SWAGGER_DIR, "text/javascript"),
    "swagger-ui-standalone-preset.js": (_SWAGGER_DIR, "text/javascript"),
    "swagger-ui.css": (_SWAGGER_DIR, "text/css"),
    "favicon-32x32.png": (_SWAGGER_DIR, "image/png"),
    "reference.js": (_OWN_DIR, "text/javascript"),
    "reference.css": (_OWN_DIR, "text/css"),
}

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
_PAGE_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


@cache
def _read(directory: Path, name: str) -> bytes:
    return (directory / name).read_bytes()


@get("/docs", include_in_schema=False)
async def docs_page() -> Response[bytes]:
    return Response(
        content=_read(_OWN_DIR, "reference.html"),
        media_type="text/html; charset=utf-8",
        headers=_PAGE_HEADERS,
    )


@get("/docs/assets/{name:str}", include_in_schema=False)
async def docs_asset(name: str) -> Response[bytes]:
    if name not in _ASSETS:
        raise ApiError(404)
    directory, media_type = _ASSETS[name]
    return Response(
        content=_read(directory, name),
        media_type=media_type,
        headers={
            "X-Content-Type-Options": "nosniff",
            "Cache-Control": "public, max-age=3600",
        },
    )


ROUTES = [docs_page, docs_asset]
