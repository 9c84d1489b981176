"""The OpenAPI 3.1 documents, assembled from the same Pydantic models the API validates
requests with and the same msgspec Structs it encodes answers with (``openapi/answers.py``).

Two documents: the partner API (``/openapi.json``, with the webhooks partners receive) and the
operations API for coordinators (``/openapi-ops.json``); ``full_document`` joins them for
docs/api.md. Built by hand rather than inferred from handlers because handlers read raw
bodies (to detect the request shape and report every field error in the spec's format). Tests
check that every served route is documented, validate the documents and every example in
them, and schemathesis checks live responses against them.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import msgspec
from litestar import Response, get
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from rehabref.events.catalogue import DESCRIPTIONS, EVENT_TYPES
from rehabref.openapi.answers import answer_components
from rehabref.openapi.error_codes import codes_for, table
from rehabref.openapi.event_payloads import (
    DATA_EXAMPLES,
    DATA_MODELS,
    event_envelope,
    event_schema_name,
)
from rehabref.openapi.examples import OPERATION_EXAMPLES, VALIDATION_FIELDS
from rehabref.openapi.operations import Operation, errors, header
from rehabref.openapi.registry import ANSWER_TYPES, OPERATIONS, SCHEMA_MODELS
from rehabref.openapi.schema_text import Examples

REF = "#/components/schemas/{model}"
OPS_TAG = "ops"
_SERVERS = [
    {
        "url": "/",
        "description": "The server that serves this document (your sandbox or production host).",
    }
]

_PARTNER_INTRO = """Refer patients for physiotherapy, follow their progress and receive signed
webhooks.

**Authentication.** `Authorization: Bearer <API key>`: `sk_test_...` keys work in the sandbox,
`sk_live_...` keys in production; publishable `pk_` keys are refused (403).

**Idempotency.** Creates take an `Idempotency-Key` header (required for Shape V1 referrals):
a retry with the same key and body replays the first answer with `Idempotent-Replayed: true`;
the same key with another body is 422 `idempotency_key_reused`. Keys are kept for 24 hours.

**Request ids.** Send `X-Request-ID` (1-128 characters of `A-Za-z0-9._:-`) to trace a call;
every answer echoes it (or a generated one) and error bodies repeat it as `error.request_id`.

**Rate limits.** Each key has a budget per window: `RateLimit-Limit`, `RateLimit-Remaining`
and `RateLimit-Reset` on every answer; over it, 429 `rate_limited` with `Retry-After`.

**Webhooks.** Events are `POST`ed to your registered endpoints, signed: `X-Service-Signature`
is `v1=` + hex HMAC-SHA-256 of `"{X-Service-Timestamp}.{raw body}"` keyed with your
`whsec_...` secret; reject timestamps more than 300 s away. See the `webhooks` section.

**Errors.** Every error answer is `{"error": {"code", "message", "fields", "request_id"}}`:

"""

_OPS_INTRO = """The coordinators' API: referrals of every partner, contact tasks, physiotherapists,
sessions, payments and commission statements. Authenticate with an operator token
(`Authorization: Bearer op_...`, from `rehabref operators create`); partner keys get 401.
Errors have the partner API's body and codes.
"""

_TAGS = {
    "referrals": "Create referrals, retrieve and list them.",
    "referral-links": "Links a patient opens to refer themselves under your agreement.",
    "eligibility": "Check a member's eligibility before referring.",
    "sessions": "Treatment sessions and outcome reports of your referrals.",
    "commission": "Your monthly commission statements.",
    "webhooks": "Register endpoints for the events below; event history and redelivery.",
    "sandbox": "Sandbox-only helpers (test keys).",
    OPS_TAG: "Coordinator operations.",
}

_SIGNATURE_HEADERS = [
    header("X-Service-Event-ID", "The event's id (equals event_id in the body).", required=True),
    header("X-Service-Timestamp", "Unix seconds when this attempt was signed.", required=True),
    header(
        "X-Service-Signature",
        '`v1=<hex HMAC-SHA-256 of "{timestamp}.{raw body}">`, keyed with your whole webhook '
        "secret; several space-separated values during a secret rotation.",
        required=True,
    ),
]
_REQUEST_ID_PARAMETER = header(
    "X-Request-ID", "Your trace id (1-128 of A-Za-z0-9._:-), echoed back; optional."
)


@cache
def _all_components() -> dict[str, Any]:
    models: list[tuple[type[BaseModel], Any]] = [(m, "validation") for m in SCHEMA_MODELS]
    models += [(m, "validation") for m in DATA_MODELS.values()]
    _, schema = models_json_schema(models, ref_template=REF)
    components = dict(schema.get("$defs", {}))
    answers = answer_components(ANSWER_TYPES)
    clashes = set(components) & set(answers)
    if clashes:
        raise TypeError(f"a Pydantic model and an answer type share a name: {clashes}")
    components.update(answers)
    for event_type in EVENT_TYPES:
        data_ref = REF.format(model=DATA_MODELS[event_type].__name__)
        components[event_schema_name(event_type)] = event_envelope(event_type, data_ref)
    components["WebhookEvent"] = {
        "description": "Any event this service sends; `type` tells which.",
        "oneOf": [{"$ref": REF.format(model=event_schema_name(t))} for t in EVENT_TYPES],
    }
    return components


def _example_of(schema: dict[str, Any]) -> Any:
    return Examples(_all_components()).of(schema)


def _error_examples(status: int) -> dict[str, Any]:
    return {
        code: {
            "summary": when,
            "value": {
                "error": {
                    "code": code,
                    "message": when,
                    "fields": VALIDATION_FIELDS if code == "validation_error" else {},
                    "request_id": "walkthrough-1",
                }
            },
        }
        for code, when in codes_for(status)
    }


def _response(op: Operation, status: int) -> dict[str, Any]:
    description, model, headers = {**errors(400), **op.responses}[status]
    codes = codes_for(status) if status >= 400 else []
    if codes:
        description += " Codes: " + ", ".join(f"`{code}`" for code, _ in codes) + "."
    response: dict[str, Any] = {"description": description}
    if model is not None:
        schema = {"$ref": REF.format(model=model.__name__)}
        content: dict[str, Any] = {"schema": schema}
        if status >= 400:
            content["examples"] = _error_examples(status)
        elif 200 <= status < 300:
            explicit = OPERATION_EXAMPLES.get(op.operation_id, {})
            content["example"] = explicit.get("response", _example_of(schema))
        response["content"] = {"application/json": content}
    if headers:
        response["headers"] = {
            name: {"schema": {"type": "string"}, "description": text}
            for name, text in headers.items()
        }
    return response


def _operation(op: Operation) -> dict[str, Any]:
    parameters = list(op.parameters)
    if not any(p["name"] == "X-Request-ID" for p in parameters):
        parameters.append(_REQUEST_ID_PARAMETER)
    body: dict[str, Any] = {
        "operationId": op.operation_id,
        "summary": op.summary,
        "description": op.description,
        "tags": [op.tag],
        "parameters": parameters,
        "responses": {},
    }
    if op.secured:
        body["security"] = [{"bearerAuth": []}]
    if op.request_model is not None:
        schema = op.request_schema()
        explicit = OPERATION_EXAMPLES.get(op.operation_id, {})
        body["requestBody"] = {
            "required": True,
            "content": {
                "application/json": {
                    "schema": schema,
                    "example": explicit.get("request", _example_of(schema)),
                }
            },
        }
    # Any URL may be refused as malformed (a NUL character, see request_context), so every
    # operation documents 400 even when its own handler never raises one.
    for status in sorted({400, *op.responses}):
        body["responses"][str(status)] = _response(op, status)
    return body


def _webhook(event_type: str) -> dict[str, Any]:
    name = event_schema_name(event_type)
    return {
        "post": {
            "operationId": f"on{name}",
            "summary": f"{event_type}: {DESCRIPTIONS[event_type]}",
            "description": (
                "Sent to every enabled endpoint subscribed to this type. Verify the signature "
                "over the raw body before trusting it; process idempotently by `event_id` "
                "(deliveries are at least once). Answer 2xx within 10 s."
            ),
            "tags": ["webhook events"],
            "parameters": _SIGNATURE_HEADERS,
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {"$ref": REF.format(model=name)},
                        "example": {
                            "event_id": "evt_01jd3k8s0m2r5x7c9v1b3n5q7w",
                            "type": event_type,
                            "occurred_at": "2026-11-22T08:00:00.000Z",
                            "data": DATA_EXAMPLES[event_type],
                        },
                    }
                },
            },
            "responses": {
                "2XX": {"description": "Received. Anything else (or no answer in 10 s) is retried."}
            },
        }
    }


def _referenced(node: Any, components: dict[str, Any], found: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            name = ref.rsplit("/", 1)[1]
            if name not in found:
                found.add(name)
                _referenced(components[name], components, found)
        for value in node.values():
            _referenced(value, components, found)
    elif isinstance(node, list):
        for item in node:
            _referenced(item, components, found)


def _document(
    operations: tuple[Operation, ...],
    *,
    title: str,
    description: str,
    webhooks: bool,
    exclude: frozenset[str] = frozenset(),
    credential: str = "Secret API key: sk_test_... (sandbox) or sk_live_... (production).",
) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for op in operations:
        for index, path in enumerate(op.paths):
            operation = _operation(op)
            if index:
                # operationIds are unique per document: a second path of the same operation is
                # an alias (clients call the first).
                operation["operationId"] = f"{op.operation_id}Alias{index}"
                operation["x-alias-of"] = op.operation_id
            paths.setdefault(path, {})[op.method] = operation
    document: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": title, "version": "1.0.0", "description": description},
        "servers": _SERVERS,
        "tags": [
            {"name": tag, "description": text}
            for tag, text in _TAGS.items()
            if any(op.tag == tag for op in operations)
        ],
        "paths": paths,
    }
    if webhooks:
        document["tags"].append(
            {"name": "webhook events", "description": "Requests this service sends to you."}
        )
        document["webhooks"] = {event_type: _webhook(event_type) for event_type in EVENT_TYPES}
    components = _all_components()
    document["components"] = {
        "schemas": {name: components[name] for name in sorted(components) if name not in exclude},
        "securitySchemes": {
            "bearerAuth": {
                "type": "http",
                "scheme": "bearer",
                "bearerFormat": "API key",
                "description": credential,
            }
        },
    }
    return document


_PARTNER_OPERATIONS = tuple(op for op in OPERATIONS if op.tag != OPS_TAG)
_OPS_OPERATIONS = tuple(op for op in OPERATIONS if op.tag == OPS_TAG)


def _reachable(operations: tuple[Operation, ...], *, webhooks: bool) -> set[str]:
    """Component names the operations (and the webhooks) refer to, directly or not."""
    document = _document(operations, title="", description="", webhooks=webhooks)
    found: set[str] = set()
    _referenced(
        {"paths": document["paths"], "webhooks": document.get("webhooks", {})},
        _all_components(),
        found,
    )
    return found


@cache
def partner_document() -> dict[str, Any]:
    """Every schema but those only the operations API uses (the partner document also keeps
    the per-shape schemas, e.g. ReferralRecordV1, that the unions refer to)."""
    ops_only = _reachable(_OPS_OPERATIONS, webhooks=False) - _reachable(
        _PARTNER_OPERATIONS, webhooks=True
    )
    return _document(
        _PARTNER_OPERATIONS,
        title="rehabref partner API",
        description=_PARTNER_INTRO + table(),
        webhooks=True,
        exclude=frozenset(ops_only),
    )


@cache
def ops_document() -> dict[str, Any]:
    reachable = _reachable(_OPS_OPERATIONS, webhooks=False)
    return _document(
        _OPS_OPERATIONS,
        title="rehabref operations API",
        description=_OPS_INTRO,
        webhooks=False,
        exclude=frozenset(set(_all_components()) - reachable),
        credential="Operator token: op_... (`rehabref operators create`).",
    )


@cache
def full_document() -> dict[str, Any]:
    """Both APIs in one document, for docs/api.md and the client generator's checks."""
    return _document(
        OPERATIONS,
        title="rehabref API",
        description=_PARTNER_INTRO + table() + "\n\n" + _OPS_INTRO,
        webhooks=True,
    )


@cache
def _encoded(which: str) -> bytes:
    document = partner_document() if which == "partner" else ops_document()
    return msgspec.json.encode(document)


@get("/openapi.json", include_in_schema=False)
async def openapi_json() -> Response[bytes]:
    return Response(content=_encoded("partner"), media_type="application/json")


@get("/openapi-ops.json", include_in_schema=False)
async def openapi_ops_json() -> Response[bytes]:
    return Response(content=_encoded("ops"), media_type="application/json")


ROUTES = [openapi_json, openapi_ops_json]
