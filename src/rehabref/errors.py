"""The one error body of the interface and the exception handlers that produce it.

Every error answer is ``{"error": {"code", "message", "fields", "request_id"}}``. Codes are
stable snake_case identifiers documented in docs/decisions.md.
"""

from __future__ import annotations

import logging
import traceback
from typing import Any

import msgspec
from litestar import Request, Response
from litestar.exceptions import HTTPException
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as SQLAlchemyTimeoutError

from rehabref.api_request import ApiRequest

log = logging.getLogger("rehabref.errors")

_DEFAULT_CODES = {
    400: "malformed_request",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "malformed_request",
    422: "validation_error",
    429: "rate_limited",
    500: "internal_error",
    503: "service_unavailable",
}

_DEFAULT_MESSAGES = {
    400: "The request could not be read; check the JSON body and headers.",
    401: "Missing or invalid API key.",
    403: "This key may not perform this action.",
    404: "Not found.",
    405: "Method not allowed on this path.",
    413: "The request body is larger than 1 MiB.",
    429: "Rate limit exceeded; retry after the number of seconds in Retry-After.",
    500: "Temporary service error; retry with the same Idempotency-Key.",
    503: "Service temporarily unavailable; retry with the same Idempotency-Key.",
}


class ApiError(Exception):
    """An error answer with a stable code; raise it from endpoints and dependencies."""

    def __init__(
        self,
        status: int,
        code: str | None = None,
        message: str | None = None,
        *,
        fields: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.status = status
        self.code = code or _DEFAULT_CODES.get(status, "error")
        self.message = message or _DEFAULT_MESSAGES.get(status, "Request failed.")
        self.fields = fields or {}
        self.headers = headers or {}
        super().__init__(self.code)


def request_id_of(request: ApiRequest) -> str:
    return str(request.scope.get("state", {}).get("request_id", ""))


def error_body(*, code: str, message: str, fields: dict[str, str], request_id: str) -> bytes:
    return msgspec.json.encode(
        {"error": {"code": code, "message": message, "fields": fields, "request_id": request_id}}
    )


def error_response(request: ApiRequest, error: ApiError) -> Response[bytes]:
    headers = error.headers
    if error.status == 401 and "WWW-Authenticate" not in headers:
        headers = {**headers, "WWW-Authenticate": 'Bearer realm="rehabref"'}
    return Response(
        content=error_body(
            code=error.code,
            message=error.message,
            fields=error.fields,
            request_id=request_id_of(request),
        ),
        status_code=error.status,
        media_type="application/json",
        headers=headers,
    )


def handle_api_error(request: Request[Any, Any, Any], exc: ApiError) -> Response[bytes]:
    return error_response(request, exc)


def handle_http_exception(request: Request[Any, Any, Any], exc: HTTPException) -> Response[bytes]:
    status = exc.status_code
    headers = dict(exc.headers or {})
    if status == 415:
        status = 400
    error = ApiError(status, headers=headers)
    if status == 400 and exc.detail and "body" in str(exc.detail).lower():
        error.message = "The request body is not valid JSON."
    return error_response(request, error)


# SQLSTATE classes of a database that cannot serve now, whatever the request: connection
# exceptions (08), insufficient resources such as too many connections (53), and a server
# shutting down or starting up (57P).
_UNAVAILABLE_SQLSTATES = ("08", "53", "57P")
# SQLite's equivalents: the file cannot be opened, stays locked past the timeout, or the disk
# is full or failing.
_UNAVAILABLE_SQLITE_ERRORS = ("SQLITE_CANTOPEN", "SQLITE_BUSY", "SQLITE_FULL", "SQLITE_IOERR")
_UNAVAILABLE_CODES = _UNAVAILABLE_SQLSTATES + _UNAVAILABLE_SQLITE_ERRORS
# Seconds a client is asked to wait before retrying when the database is unavailable.
UNAVAILABLE_RETRY_AFTER = 1


def _sqlstate(exc: BaseException) -> str | None:
    """The SQLSTATE of a database error (SQLAlchemy's wrapper, asyncpg's own, or SQLite's
    error name), which says what went wrong without quoting any data."""
    for candidate in (exc, getattr(exc, "orig", None)):
        code = getattr(candidate, "sqlstate", None) or getattr(candidate, "sqlite_errorname", None)
        if isinstance(code, str):
            return code
    return None


def database_unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` means the database cannot be reached or cannot take more work now."""
    if isinstance(exc, SQLAlchemyTimeoutError | ConnectionError | TimeoutError):
        return True  # no pooled connection came free in time; refused; timed out
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    code = _sqlstate(exc)
    return code is not None and code.startswith(_UNAVAILABLE_CODES)


def handle_unexpected(request: ApiRequest, exc: Exception) -> Response[bytes]:
    # The exception type only: messages may carry request data.
    frame = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    where = f"{frame[0].filename}:{frame[0].lineno}" if frame else "unknown"
    details = {"error_type": type(exc).__name__, "where": where, "sqlstate": _sqlstate(exc)}
    if database_unavailable(exc):
        # Not a fault of the request or of the code: the client may retry (idempotently).
        log.warning("database unavailable", extra=details)
        retry_after = {"Retry-After": str(UNAVAILABLE_RETRY_AFTER)}
        return error_response(request, ApiError(503, headers=retry_after))
    log.error("unhandled error", extra=details)
    return error_response(request, ApiError(500))
