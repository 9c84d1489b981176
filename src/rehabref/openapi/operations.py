"""Building blocks for describing operations; each domain lists its own in ``api_docs.py``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from rehabref.documents import FORMATS
from rehabref.errors_schema import ErrorBody
from rehabref.openapi.answers import AnswerType

# (description, the body's type: a typed answer or a Pydantic model, headers)
ResponseSpec = tuple[str, AnswerType | type[BaseModel] | None, dict[str, str]]

REQUEST_ID = {"X-Request-ID": "The request id (yours if you sent one); equals error.request_id."}
RATE_HEADERS = {
    "RateLimit-Limit": "Requests allowed per window for this key.",
    "RateLimit-Remaining": "Requests left in the current window.",
    "RateLimit-Reset": "Seconds until the window resets.",
}

_ERROR_TEXT = {
    400: "Malformed request: invalid JSON, wrong Content-Type, a missing or invalid "
    "Idempotency-Key, or a NUL character in the URL.",
    401: "Missing, invalid or revoked API key.",
    403: "The key may not call this operation (e.g. a publishable key).",
    404: "Not found for this partner and environment.",
    409: "Conflict: duplicate external_ref, or the same Idempotency-Key still in flight.",
    413: "Body larger than 1 MiB.",
    422: "Field validation failed; see error.fields.",
    429: "Rate limit exceeded; retry after Retry-After seconds.",
    503: "Temporarily unavailable (e.g. the messaging provider); retry with the same "
    "Idempotency-Key.",
}


def errors(*statuses: int) -> dict[int, ResponseSpec]:
    result: dict[int, ResponseSpec] = {}
    for status in statuses:
        headers = dict(REQUEST_ID)
        if status == 429:
            headers = {**headers, "Retry-After": "Seconds to wait.", **RATE_HEADERS}
        result[status] = (_ERROR_TEXT[status], ErrorBody, headers)
    return result


def query(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "schema": schema,
        "description": description,
    }


def document_format_query() -> dict[str, Any]:
    """``?format=`` of a statement or invoice (documents.py)."""
    return query(
        "format",
        {"type": "string", "enum": list(FORMATS), "default": "json"},
        "Answer as JSON (default), CSV or PDF.",
    )


# Every cursor-paged list takes these two (cursors.py).
PAGE_PARAMETERS = (
    query("limit", {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}, "Page size."),
    query("cursor", {"type": "string"}, "next_cursor of the previous page."),
)


def header(name: str, description: str, *, required: bool = False) -> dict[str, Any]:
    return {
        "name": name,
        "in": "header",
        "required": required,
        "schema": {"type": "string", "maxLength": 255},
        "description": description,
    }


@dataclass(frozen=True)
class Operation:
    operation_id: str
    method: str
    paths: tuple[str, ...]
    summary: str
    description: str
    tag: str
    responses: dict[int, ResponseSpec]
    request_model: type[BaseModel] | None = None
    parameters: list[dict[str, Any]] = field(default_factory=list)
    secured: bool = True

    def request_schema(self) -> dict[str, Any]:
        assert self.request_model is not None
        return {"$ref": f"#/components/schemas/{self.request_model.__name__}"}


OK_HEADERS = {**REQUEST_ID, **RATE_HEADERS}
