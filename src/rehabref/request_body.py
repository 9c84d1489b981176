"""Reading JSON request bodies and turning Pydantic errors into the spec's field map."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec
from pydantic import BaseModel, ValidationError

from rehabref.api_request import ApiRequest
from rehabref.errors import ApiError

ModelT = TypeVar("ModelT", bound=BaseModel)

_MESSAGES = {
    "missing": "This field is required.",
    "extra_forbidden": "Unknown field.",
    "string_type": "Must be a string.",
    "bool_type": "Must be true or false.",
    "int_type": "Must be an integer.",
    "dict_type": "Must be a JSON object.",
    "model_type": "Must be a JSON object.",
}


async def json_object(request: ApiRequest) -> dict[str, Any]:
    content_type = request.headers.get("content-type", "")
    if content_type.split(";", 1)[0].strip().lower() != "application/json":
        raise ApiError(
            400,
            "malformed_request",
            "Send the body as JSON with Content-Type: application/json.",
            fields={"Content-Type": "Must be application/json."},
        )
    raw = await request.body()  # enforces the 1 MiB limit (413)
    try:
        body = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        raise ApiError(400, "malformed_request", "The request body is not valid JSON.") from None
    except UnicodeDecodeError:  # msgspec raises this, not DecodeError, for bad UTF-8 in strings
        raise ApiError(400, "malformed_request", "The request body is not valid UTF-8.") from None
    except RecursionError:  # msgspec gives up on very deep nesting (e.g. 100k brackets)
        raise ApiError(400, "malformed_request", "The request body is nested too deeply.") from None
    if not isinstance(body, dict):
        raise ApiError(400, "malformed_request", "The request body must be a JSON object.")
    # PostgreSQL text cannot hold NUL (storing one would be a 500), and no field needs it.
    if b"\\u0000" in raw:
        where = _nul_at(body, "")
        if where is not None:
            raise ApiError(
                422,
                "validation_error",
                "Some fields are invalid; see error.fields.",
                fields={where or "body": "Control characters are not allowed."},
            )
    return body


def _nul_at(body: dict[str, Any], path: str) -> str | None:
    """The path of the first string (or object key) holding NUL, in the field map's
    notation (``patient.first_name``, ``items.0``); None when there is none. A loop, not
    recursion: the body may be nested as deep as the decoder allows."""
    stack: list[tuple[Any, str]] = [(body, path)]
    while stack:
        value, where = stack.pop()
        if isinstance(value, str):
            if "\x00" in value:
                return where
            continue
        if isinstance(value, dict):
            items: Any = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            continue
        for key, item in reversed(list(items)):
            if isinstance(key, str) and "\x00" in key:
                return where  # the key itself is not echoed back
            stack.append((item, f"{where}.{key}" if where else str(key)))
    return None


def field_errors(error: ValidationError) -> dict[str, str]:
    result: dict[str, str] = {}
    for item in error.errors(include_url=False, include_input=False):
        parts = [str(part) for part in item["loc"]]
        # Cross-field rules name the field they blame in ctx (see ``fields.error_at``).
        blamed = (item.get("ctx") or {}).get("field_path")
        if isinstance(blamed, str):
            parts.append(blamed)
        path = ".".join(parts) or "body"
        if path in result:
            continue
        message = _MESSAGES.get(item["type"]) or str(item["msg"])
        result[path] = message.removeprefix("Value error, ")
    return result


def validate(model: type[ModelT], body: dict[str, Any]) -> ModelT:
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        raise ApiError(
            422,
            "validation_error",
            "Some fields are invalid; see error.fields.",
            fields=field_errors(exc),
        ) from None
