"""The served OpenAPI documents are complete: valid OpenAPI 3.1 (openapi-spec-validator),
servers, an example request and response for every operation, every error code with its
status, every event type under ``webhooks`` with its data schema and signature headers, the
Idempotency-Key, X-Request-ID and rate-limit headers; and every example matches its schema
(jsonschema, with format checks)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
from openapi_spec_validator import validate

from rehabref.events.catalogue import EVENT_TYPES, within_boundary
from rehabref.events.samples import sample_data
from rehabref.openapi.error_codes import ERROR_CODES

SOURCE = Path(__file__).resolve().parents[2] / "src" / "rehabref"
METHODS = {"get", "post", "put", "patch", "delete"}


@pytest.fixture(scope="module")
def documents(server) -> dict[str, dict[str, Any]]:
    return {
        name: httpx.get(f"{server.base_url}{name}").json()
        for name in ("/openapi.json", "/openapi-ops.json")
    }


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    ]


def validator(document: dict[str, Any], schema: dict[str, Any]) -> Any:
    return jsonschema.Draft202012Validator(
        {**schema, "components": document["components"]},
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
    )


def examples_of(document: dict[str, Any]) -> list[tuple[str, dict[str, Any], Any]]:
    """(where, schema, example) for every example in the document's bodies."""
    found = []
    items = {**document["paths"], **document.get("webhooks", {})}
    for path, item in items.items():
        for method, operation in item.items():
            if method not in METHODS:
                continue
            contents = [("request", operation.get("requestBody", {}).get("content", {}))]
            contents += [(s, r.get("content", {})) for s, r in operation["responses"].items()]
            for where, content in contents:
                for media in content.values():
                    label = f"{method} {path} {where}"
                    if "example" in media:
                        found.append((label, media["schema"], media["example"]))
                    for name, example in media.get("examples", {}).items():
                        found.append((f"{label} {name}", media["schema"], example["value"]))
    return found


def test_documents_are_valid_openapi_3_1(documents):
    for document in documents.values():
        assert document["openapi"] == "3.1.0"
        validate(document)
        assert document["servers"] and document["servers"][0]["url"] == "/"
        assert {tag["name"] for tag in document["tags"]} >= {
            op["tags"][0] for _, _, op in operations(document)
        }


def test_every_operation_has_an_example_request_and_response(documents):
    for document in documents.values():
        for method, path, operation in operations(document):
            body = operation.get("requestBody")
            if body:
                assert "example" in body["content"]["application/json"], (method, path)
            success = [r for s, r in operation["responses"].items() if s.startswith("2")]
            assert success, (method, path)
            for response in success:
                for media in response.get("content", {}).values():
                    assert "example" in media, (method, path)


def test_every_example_matches_its_schema(documents):
    checked = 0
    for document in documents.values():
        for where, schema, example in examples_of(document):
            errors = list(validator(document, schema).iter_errors(example))
            assert not errors, f"{where}: {errors[0].message}"
            checked += 1
    assert checked > 300


def test_the_walkthrough_values_are_the_examples(documents):
    create = documents["/openapi.json"]["paths"]["/api/v1/partners/referrals"]["post"]
    example = create["requestBody"]["content"]["application/json"]["example"]
    assert example["external_ref"] == "CLINIC-2026-0001"
    assert example["patient"]["first_name"] == "Amaka"
    created = create["responses"]["201"]["content"]["application/json"]["example"]
    assert created["next_action"] == "start_assistant"


def test_every_error_code_in_the_source_is_documented_with_its_status(documents):
    pattern = re.compile(r'ApiError\(\s*(\d{3}),\s*"([a-z_]+)"|(\d{3}),\s*code="([a-z_]+)"')
    raised: set[tuple[int, str]] = set()
    for path in SOURCE.rglob("*.py"):
        for match in pattern.finditer(path.read_text(encoding="utf-8")):
            status, code = match.group(1) or match.group(3), match.group(2) or match.group(4)
            raised.add((int(status), code))
    listed = {(status, code) for status, code, _ in ERROR_CODES}
    assert len(raised) >= 15
    assert raised <= listed, sorted(raised - listed)
    in_documents = {
        (int(status), name)
        for document in documents.values()
        for _, _, operation in operations(document)
        for status, response in operation["responses"].items()
        for name in response.get("content", {}).get("application/json", {}).get("examples", {})
    }
    # Every code a documented operation can answer is shown with its status (405 and 500 are
    # never a documented answer: no route allows them).
    assert {(s, c) for s, c in listed if s not in (405, 500)} <= in_documents


def test_every_event_type_is_a_webhook_with_its_data_schema_and_signature_headers(documents):
    document = documents["/openapi.json"]
    webhooks = document["webhooks"]
    assert set(webhooks) == set(EVENT_TYPES)
    assert {"payment.refunded", "commission.settled", "referral.closed"} <= set(webhooks)
    schemas = document["components"]["schemas"]
    for event_type, item in webhooks.items():
        operation = item["post"]
        headers = {p["name"] for p in operation["parameters"] if p["in"] == "header"}
        assert headers == {"X-Service-Event-ID", "X-Service-Timestamp", "X-Service-Signature"}
        ref = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        envelope = schemas[ref.rsplit("/", 1)[1]]
        assert envelope["properties"]["type"] == {"const": event_type}
        data = schemas[envelope["properties"]["data"]["$ref"].rsplit("/", 1)[1]]
        assert data["properties"], event_type


@pytest.mark.parametrize("contract", ["v1", "g"])
def test_the_sandbox_samples_of_every_type_match_the_webhook_schemas(documents, contract):
    """The sandbox sends what real events carry, so the documented schemas describe them."""
    document = documents["/openapi.json"]
    for event_type in EVENT_TYPES:
        _, data = sample_data(event_type, contract=contract)
        event = {
            "event_id": "evt_01jd3k8s0m2r5x7c9v1b3n5q7w",
            "type": event_type,
            "occurred_at": "2026-11-22T08:00:00.000Z",
            "data": within_boundary(data, contract=contract),
        }
        schema = document["webhooks"][event_type]["post"]["requestBody"]["content"][
            "application/json"
        ]["schema"]
        errors = list(validator(document, schema).iter_errors(event))
        assert not errors, f"{event_type}: {errors[0].message}"
        wrong = {**event, "data": {**event["data"], "referral_id": 7}}
        if "referral_id" in event["data"]:
            assert list(validator(document, schema).iter_errors(wrong)), event_type


def test_idempotency_request_id_and_rate_limit_headers_are_documented(documents):
    partner = documents["/openapi.json"]
    create = partner["paths"]["/api/v1/partners/referrals"]["post"]
    parameters = {p["name"]: p for p in create["parameters"]}
    assert parameters["Idempotency-Key"]["in"] == "header"
    assert "Idempotent-Replayed" in create["responses"]["201"]["headers"]
    for document in documents.values():
        for method, path, operation in operations(document):
            names = {p["name"] for p in operation["parameters"]}
            assert "X-Request-ID" in names, (method, path)
            for status, response in operation["responses"].items():
                assert "X-Request-ID" in response.get("headers", {}), (method, path, status)
    for method, path, operation in operations(partner):
        for status, response in operation["responses"].items():
            if status.startswith("2"):
                headers = response.get("headers", {})
                assert {"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} <= set(
                    headers
                ), (method, path)
        if "429" in operation["responses"]:
            assert "Retry-After" in operation["responses"]["429"]["headers"]
