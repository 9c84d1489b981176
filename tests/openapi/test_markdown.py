"""The Markdown API reference (docs/api.md) rendered from the OpenAPI document."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from rehabref.openapi.document import full_document as openapi_document
from rehabref.openapi.markdown import render, type_of

API_MD = Path(__file__).resolve().parents[2] / "docs" / "api.md"
METHODS = ("get", "put", "post", "patch", "delete")


def _operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, item[method])
        for path, item in document["paths"].items()
        for method in METHODS
        if method in item
    ]


def _tables(markdown: str) -> list[list[str]]:
    tables: list[list[str]] = []
    current: list[str] = []
    for line in markdown.splitlines():
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    if current:
        tables.append(current)
    return tables


def _cells(row: str) -> int:
    return len(re.split(r"(?<!\\)\|", row)) - 2


def test_every_operation_path_and_schema_is_rendered():
    document = openapi_document()
    markdown = render(document)
    operations = _operations(document)
    assert operations, "the document lists no operations"
    for method, path, operation in operations:
        assert f"Operation id: `{operation['operationId']}`" in markdown
        assert f"`{method.upper()} {path}`" in markdown
        for status in operation["responses"]:
            assert re.search(rf"^\| {status} \|", markdown, re.MULTILINE), (path, status)
        for param in operation.get("parameters", []):
            assert f"| `{param['name']}` | {param['in']} |" in markdown
    for name in document["components"]["schemas"]:
        assert f"### {name}\n" in markdown
        assert f'<a id="schema-{name.lower()}"></a>' in markdown


def _sections(markdown: str) -> dict[str, str]:
    """Operation id -> its rendered section."""
    parts = re.split(r'<a id="op-[^"]+"></a>', markdown)
    sections: dict[str, str] = {}
    for part in parts[1:]:
        found = re.search(r"Operation id: `([^`]+)`", part)
        if found:
            sections[found.group(1)] = part.split("## Schemas")[0]
    return sections


def test_request_bodies_come_with_a_json_example_that_parses():
    document = openapi_document()
    markdown = render(document)
    sections = _sections(markdown)
    with_body = [
        op
        for _, _, op in _operations(document)
        if "application/json" in (op.get("requestBody") or {}).get("content", {})
    ]
    assert with_body
    for operation in with_body:
        section = sections[operation["operationId"]]
        blocks = re.findall(r"```json\n(.*?)\n```", section, re.DOTALL)
        assert blocks, operation["operationId"]
        for block in blocks:
            json.loads(block)
    create = sections["createReferral"]
    assert '"external_ref": "CLINIC-2026-0001"' in create


def test_a_body_of_alternatives_gets_one_example_per_alternative():
    component = {"anyOf": [{"$ref": "#/components/schemas/A"}, {"$ref": "#/components/schemas/B"}]}
    document = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/x": {
                "post": {
                    "operationId": "postX",
                    "requestBody": {
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Either"}}
                        }
                    },
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
        "components": {
            "schemas": {
                "Either": component,
                "A": {
                    "type": "object",
                    "properties": {"a": {"type": "string"}},
                    "examples": [{"a": "1"}],
                },
                "B": {"type": "object", "properties": {"b": {"type": "boolean"}}},
            }
        },
    }
    markdown = render(document)
    assert "Example ([A](#schema-a)):" in markdown
    assert "Example ([B](#schema-b)) (generated from the schema):" in markdown
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)\n```", markdown, re.DOTALL)]
    assert {"a": "1"} in blocks and {"b": True} in blocks


def test_tables_have_the_same_number_of_cells_in_every_row():
    for table in _tables(render(openapi_document())):
        widths = {_cells(row) for row in table}
        assert len(widths) == 1, table


def test_schema_links_point_at_rendered_anchors():
    markdown = render(openapi_document())
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', markdown))
    links = set(re.findall(r"\]\(#([^)]+)\)", markdown))
    assert links
    assert links <= anchors, links - anchors


def test_type_rendering_of_json_schema_forms():
    assert type_of({"anyOf": [{"type": "string"}, {"type": "null"}]}) == "string or null"
    assert type_of({"$ref": "#/components/schemas/PatientV1"}) == "[PatientV1](#schema-patientv1)"
    assert type_of({"type": "array", "items": {"type": "integer"}}) == "array of integer"
    assert type_of({"enum": ["a", "b"]}) == "one of `a`, `b`"
    assert type_of({"const": "v1"}) == "constant `v1`"
    assert type_of({"type": "string", "format": "date-time"}) == "string (date-time)"
    assert (
        type_of({"type": "object", "additionalProperties": {"type": "string"}})
        == "object (map of string to string)"
    )
    assert type_of({"oneOf": [{"$ref": "#/x/A"}, {"$ref": "#/x/B"}]}) == (
        "[A](#schema-a) or [B](#schema-b)"
    )
    assert type_of({}) == "any"


def test_examples_are_generated_when_a_schema_has_none_and_pipes_are_escaped():
    document = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/things": {
                "post": {
                    "operationId": "makeThing",
                    "summary": "Make a thing",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}
                        },
                    },
                    "responses": {"204": {"description": "Made | done."}},
                }
            }
        },
        "components": {
            "schemas": {
                "Thing": {
                    "type": "object",
                    "description": "A thing.",
                    "properties": {
                        "name": {"type": "string", "description": "a | b"},
                        "when": {"type": "string", "format": "date-time"},
                        "count": {"type": "integer", "minimum": 1},
                        "kind": {"enum": ["x", "y"]},
                        "tags": {"type": "array", "items": {"type": "string"}},
                    },
                    "required": ["name"],
                }
            }
        },
    }
    markdown = render(document)
    assert "Example (generated from the schema):" in markdown
    example = json.loads(re.search(r"```json\n(.*?)\n```", markdown, re.DOTALL).group(1))
    assert example == {
        "name": "string",
        "when": "2026-01-31T09:30:00Z",
        "count": 1,
        "kind": "x",
        "tags": ["string"],
    }
    assert "| 204 | Made \\| done. | none | - |" in markdown
    assert "| `name` | string | yes | a \\| b |" in markdown
    assert "Authentication: none." in markdown


# ---------------------------------------------------------------------------------------------
# GENERATED-DOC FRESHNESS CHECK. docs/api.md is generated; when the API changes this fails until
# it is regenerated with `make docs` (python -m rehabref.openapi.markdown > docs/api.md).
# ---------------------------------------------------------------------------------------------
def test_docs_api_md_is_current__regenerate_with_make_docs():
    assert API_MD.exists(), "docs/api.md is missing: run `make docs`"
    assert API_MD.read_text(encoding="utf-8") == render(openapi_document()), (
        "docs/api.md is stale: run `make docs` and commit the result"
    )
