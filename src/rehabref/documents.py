"""The JSON, CSV and PDF forms of a statement or invoice: the ``format`` query value, and the
download answer for the documents (one media type per kind, never cached)."""

from __future__ import annotations

from collections.abc import Mapping

from litestar import Response

from rehabref.errors import ApiError

FORMATS = ("json", "csv", "pdf")
MEDIA_TYPES = {"csv": "text/csv; charset=utf-8", "pdf": "application/pdf"}


def document_format(query: Mapping[str, str]) -> str:
    """``?format=``: ``json`` (the default), ``csv`` or ``pdf``; anything else is 422."""
    kind = query.get("format", "json")
    if kind not in FORMATS:
        raise ApiError(
            422,
            "validation_error",
            "Invalid query parameters.",
            fields={"format": "Must be json, csv or pdf."},
        )
    return kind


def attachment(content: bytes, kind: str, filename: str) -> Response[bytes]:
    """A CSV or PDF document (``kind``) to download as ``filename``."""
    return Response(
        content=content,
        media_type=MEDIA_TYPES[kind],
        headers={
            "Cache-Control": "no-store",
            "Content-Disposition": f'attachment; filename="{filename}"',
        },
    )
