"""The OpenAPI document at /openapi.json: a valid 3.1 document that describes every served API
route, with examples that match their own schemas; /docs renders it."""

from __future__ import annotations

import re
from typing import Any

import httpx
import jsonschema_rs
import pytest
from schemathesis.specs.openapi.definitions import OPENAPI_31_VALIDATOR

from rehabref.app import JSON_ROUTES, create_app
from rehabref.config import Settings
from rehabref.plain_asgi import RouteAuth

METHODS = {"get", "post", "put", "patch", "delete"}


def fetch(server, path: str) -> dict[str, Any]:
    response = httpx.get(f"{server.base_url}{path}")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    return dict(response.json())


@pytest.fixture(scope="module")
def document(server) -> dict[str, Any]:
    """The partner document and the operations document, joined: together they describe
    every served route."""
    partner, ops = fetch(server, "/openapi.json"), fetch(server, "/openapi-ops.json")
    assert not set(partner["paths"]) & set(ops["paths"])
    return {
        **partner,
        "paths": {**partner["paths"], **ops["paths"]},
        "components": {
            **partner["components"],
            "schemas": {**partner["components"]["schemas"], **ops["components"]["schemas"]},
        },
    }


def served_api_routes() -> set[tuple[str, str]]:
    """(method, path) of every handler the app serves and includes in the schema: the JSON
    routes of the router in front of Litestar, and Litestar's own."""
    app = create_app(Settings(database_url="sqlite:///unused.db"))
    served = {(route.method.lower(), route.path) for route in JSON_ROUTES if route.in_schema}
    for route in app.routes:
        path = re.sub(r"\{(\w+):\w+\}", r"{\1}", route.path)
        for handler in getattr(route, "route_handlers", []):
            if handler.include_in_schema is False:
                continue
            for method in handler.http_methods:
                if method.lower() in METHODS:
                    served.add((method.lower(), path))
    return served


def documented(document: dict[str, Any]) -> set[tuple[str, str]]:
    return {
        (method, path)
        for path, item in document["paths"].items()
        for method in item
        if method in METHODS
    }


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    ]


def test_document_is_valid_openapi_3_1(document):
    assert document["openapi"] == "3.1.0"
    OPENAPI_31_VALIDATOR.validate(document)
    assert document["info"]["title"] and document["info"]["version"]


def test_every_served_api_route_is_documented(document):
    missing = served_api_routes() - documented(document)
    assert not missing, f"served but not documented: {sorted(missing)}"


def test_every_documented_route_is_served(document):
    extra = documented(document) - served_api_routes()
    assert not extra, f"documented but not served: {sorted(extra)}"


def test_referral_operations_are_documented_on_both_create_paths(document):
    paths = document["paths"]
    assert "post" in paths["/api/v1/partners/referrals"]
    assert "post" in paths["/v1/partner/referrals"]
    assert "get" in paths["/api/v1/partners/referrals"]
    assert "get" in paths["/api/v1/partners/referrals/{referral_id}"]


def test_operation_ids_are_unique_per_path_and_operations_are_described(document):
    seen: dict[str, set[str]] = {}
    for method, path, operation in operations(document):
        assert operation.get("summary"), (method, path)
        assert operation.get("description"), (method, path)
        assert operation.get("tags"), (method, path)
        seen.setdefault(operation["operationId"], set()).add(method)
    for operation_id, methods in seen.items():
        assert len(methods) == 1, f"{operation_id} used for several methods"


ERROR_REF = {"$ref": "#/components/schemas/ErrorBody"}


def allows_error_body(document: dict[str, Any], schema: dict[str, Any]) -> bool:
    """The error body itself, or a union that includes it (sandbox eligibility's 400)."""
    if schema == ERROR_REF:
        return True
    if "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return ERROR_REF in schema.get("anyOf", []) + schema.get("oneOf", [])


def test_every_error_response_uses_the_error_body(document):
    for method, path, operation in operations(document):
        for status, response in operation["responses"].items():
            if int(status) >= 400:
                schema = response["content"]["application/json"]["schema"]
                assert allows_error_body(document, schema), (method, path, status)
                assert "X-Request-ID" in response.get("headers", {}), (method, path, status)


def test_partner_operations_declare_bearer_auth(document):
    scheme = dict(document["components"]["securitySchemes"]["bearerAuth"])
    assert scheme.pop("description").startswith("Secret API key: sk_test_")
    assert scheme == {"type": "http", "scheme": "bearer", "bearerFormat": "API key"}
    for method, path, operation in operations(document):
        if path.startswith("/api/v1/partners") or path.startswith("/v1/"):
            assert operation.get("security") == [{"bearerAuth": []}], (method, path)


def test_documented_security_follows_each_routes_authentication(document):
    """The document's bearer requirement and 401 answer agree with the route's ``auth``: every
    documented JSON route authenticates a partner key or an operator token."""
    for route in JSON_ROUTES:
        if not route.in_schema:
            continue
        operation = document["paths"][route.path][route.method.lower()]
        assert isinstance(route.auth, RouteAuth), route
        assert operation.get("security") == [{"bearerAuth": []}], route
        assert "401" in operation["responses"], route


def test_every_reference_resolves(document):
    schemas = document["components"]["schemas"]
    text = str(document)
    for name in re.findall(r"#/components/schemas/(\w+)", text):
        assert name in schemas, name


def test_component_schemas_are_valid_json_schema(document):
    for name, schema in document["components"]["schemas"].items():
        assert jsonschema_rs.meta.is_valid(schema), name


def validator_for(document: dict[str, Any], name: str) -> Any:
    schema = {"$ref": f"#/components/schemas/{name}", "components": document["components"]}
    return jsonschema_rs.validator_for(schema)


def test_examples_match_their_schemas(document):
    checked = 0
    for name, schema in document["components"]["schemas"].items():
        validator = validator_for(document, name)
        for example in schema.get("examples", []):
            validator.validate(example)
            checked += 1
    assert checked >= 1


def test_create_request_example_is_a_valid_referral(document, client, partner):
    example = document["components"]["schemas"]["ReferralCreateV1"]["examples"][0]
    response = client.post(
        "/api/v1/partners/referrals",
        json=example,
        headers={
            "Authorization": f"Bearer {partner['keys']['sk_test']}",
            "Idempotency-Key": "example-1",
        },
    )
    assert response.status_code == 201, response.text
    validator_for(document, "ReferralCreatedV1").validate(response.json())


def test_live_responses_match_the_documented_schemas(document, client, partner):
    key = partner["keys"]["sk_test"]
    headers = {"Authorization": f"Bearer {key}"}
    example = document["components"]["schemas"]["ReferralCreateV1"]["examples"][0]
    created = client.post(
        "/api/v1/partners/referrals", json=example, headers={**headers, "Idempotency-Key": "e-2"}
    ).json()
    record = client.get(f"/api/v1/partners/referrals/{created['referral_id']}", headers=headers)
    validator_for(document, "ReferralRecordV1").validate(record.json())
    page = client.get("/api/v1/partners/referrals", headers=headers)
    validator_for(document, "ReferralListV1").validate(page.json())
    error = client.get("/api/v1/partners/referrals?limit=0", headers=headers)
    validator_for(document, "ErrorBody").validate(error.json())


def test_partner_and_ops_operations_are_in_separate_documents(server):
    partner, ops = fetch(server, "/openapi.json"), fetch(server, "/openapi-ops.json")
    assert all(not path.startswith("/api/v1/ops/") for path in partner["paths"])
    assert all(path.startswith("/api/v1/ops/") for path in ops["paths"])
    assert "webhooks" in partner and "webhooks" not in ops
