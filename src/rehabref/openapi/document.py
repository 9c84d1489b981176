"""The OpenAPI 3.1 document, assembled from the same Pydantic models the API validates with.

Built by hand rather than inferred from handlers because handlers read raw bodies (to detect
the request shape and report every field error in the spec's format). A test checks that
every served route is documented and schemathesis checks responses against it.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import msgspec
from litestar import Request, Response, get
from litestar.response import Template
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from rehabref.openapi.operations import Operation, errors
from rehabref.openapi.registry import OPERATIONS, SCHEMA_MODELS

REF = "#/components/schemas/{model}"


def _components() -> dict[str, Any]:
    models: list[tuple[type[BaseModel], Any]] = [(m, "validation") for m in SCHEMA_MODELS]
    _, schema = models_json_schema(models, ref_template=REF)
    return dict(schema.get("$defs", {}))


def _operation(op: Operation) -> dict[str, Any]:
    body: dict[str, Any] = {
        "operationId": op.operation_id,
        "summary": op.summary,
        "description": op.description,
        "tags": [op.tag],
        "parameters": op.parameters,
        "responses": {},
    }
    if op.secured:
        body["security"] = [{"bearerAuth": []}]
    if op.request_model is not None:
        body["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": op.request_schema()}},
        }
    # Any URL may be refused as malformed (a NUL character, see request_context), so every
    # operation documents 400 even when its own handler never raises one.
    responses = {**errors(400), **op.responses}
    for status, (description, model, headers) in sorted(responses.items()):
        response: dict[str, Any] = {"description": description}
        if model is not None:
            response["content"] = {
                "application/json": {"schema": {"$ref": REF.format(model=model.__name__)}}
            }
        if headers:
            response["headers"] = {
                name: {"schema": {"type": "string"}, "description": text}
                for name, text in headers.items()
            }
        body["responses"][str(status)] = response
    return body


@cache
def openapi_document() -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for op in OPERATIONS:
        for path in op.paths:
            paths.setdefault(path, {})[op.method] = _operation(op)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "rehabref partner API",
            "version": "1.0.0",
            "description": (
                "Refer patients for physiotherapy, follow their progress and receive signed "
                "webhooks. Authenticate with `Authorization: Bearer <API key>`."
            ),
        },
        "paths": paths,
        "components": {
            "schemas": _components(),
            "securitySchemes": {
                "bearerAuth": {"type": "http", "scheme": "bearer", "bearerFormat": "API key"}
            },
        },
    }


@cache
def _encoded() -> bytes:
    return msgspec.json.encode(openapi_document())


@get("/openapi.json", include_in_schema=False)
async def openapi_json() -> Response[bytes]:
    return Response(content=_encoded(), media_type="application/json")


@get("/docs", include_in_schema=False)
async def docs_page(request: Request[Any, Any, Any]) -> Template:
    return Template(
        template_name="api_docs.html",
        context={"operations": OPERATIONS, "document": openapi_document()},
    )


ROUTES = [openapi_json, docs_page]
