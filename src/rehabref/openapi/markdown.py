"""The OpenAPI document rendered as a Markdown API reference (``docs/api.md``).

``python -m rehabref.openapi.markdown > docs/api.md`` (what ``make docs`` runs). Every
operation is listed with its method, paths, parameters, request body (schema and an example),
and responses (status, description, body schema, headers); then every component schema as a
field table. The output is deterministic so a test can check that docs/api.md is current.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from rehabref.openapi.schema_text import (
    Examples,
    anchor,
    cell,
    field_notes,
    type_of,
)

__all__ = ["main", "render", "type_of"]

METHODS = ("get", "put", "post", "patch", "delete", "head", "options", "trace")


def _op_anchor(operation_id: str) -> str:
    return "op-" + re.sub(r"[^a-z0-9]+", "-", operation_id.lower()).strip("-")


def _operations(paths: dict[str, Any]) -> list[tuple[str, list[str], dict[str, Any]]]:
    """(method, paths, operation) in document order; one entry per operationId."""
    found: dict[str, tuple[str, list[str], dict[str, Any]]] = {}
    for path, item in paths.items():
        for method in METHODS:
            operation = item.get(method)
            if not isinstance(operation, dict):
                continue
            key = operation.get("operationId") or f"{method} {path}"
            if key in found:
                found[key][1].append(path)
            else:
                found[key] = (method, [path], operation)
    return list(found.values())


def _parameters(operation: dict[str, Any]) -> list[str]:
    params = operation.get("parameters") or []
    if not params:
        return []
    lines = [
        "**Parameters**",
        "",
        "| Name | In | Required | Type | Description |",
        "|---|---|---|---|---|",
    ]
    for param in params:
        schema = param.get("schema", {})
        lines.append(
            f"| `{param.get('name')}` | {param.get('in')} | "
            f"{'yes' if param.get('required') else 'no'} | {cell(type_of(schema))} | "
            f"{field_notes(schema, str(param.get('description') or ''))} |"
        )
    return [*lines, ""]


def _request_body(operation: dict[str, Any], examples: Examples) -> list[str]:
    body = operation.get("requestBody")
    if not body:
        return []
    lines: list[str] = []
    required = "required" if body.get("required") else "optional"
    for media_type, content in (body.get("content") or {}).items():
        schema = content.get("schema", {})
        lines += [f"**Request body** (`{media_type}`, {required}): {type_of(schema)}", ""]
        if "json" not in media_type:
            continue
        if "example" in content:
            lines += _example_block("Example", content["example"])
            continue
        alternatives = examples.alternatives(schema)
        for branch in alternatives:
            label = "Example"
            if len(alternatives) > 1:
                label += f" ({type_of(branch)})"
            if not examples.has_own(branch):
                label += " (generated from the schema)"
            lines += _example_block(label, examples.of(branch))
    return lines


def _example_block(label: str, example: Any) -> list[str]:
    return [
        f"{label}:",
        "",
        "```json",
        json.dumps(example, indent=2, ensure_ascii=False),
        "```",
        "",
    ]


def _response_body(response: dict[str, Any]) -> str:
    parts = []
    for media_type, content in (response.get("content") or {}).items():
        parts.append(f"`{media_type}` {type_of(content.get('schema', {}))}")
    return cell("; ".join(parts)) or "none"


def _responses(operation: dict[str, Any]) -> list[str]:
    lines = [
        "**Responses**",
        "",
        "| Status | Description | Body | Headers |",
        "|---|---|---|---|",
    ]
    for status, response in (operation.get("responses") or {}).items():
        headers = ", ".join(f"`{name}`" for name in (response.get("headers") or {})) or "-"
        lines.append(
            f"| {status} | {cell(response.get('description', ''))} | "
            f"{_response_body(response)} | {headers} |"
        )
    return [*lines, ""]


def _security(operation: dict[str, Any], document: dict[str, Any]) -> str:
    requirements = operation.get("security", document.get("security", []))
    names = [name for requirement in requirements for name in requirement]
    if not names:
        return "none"
    schemes = (document.get("components") or {}).get("securitySchemes") or {}
    described = []
    for name in names:
        scheme = schemes.get(name, {})
        if scheme.get("scheme") == "bearer":
            described.append(f"`Authorization: Bearer <{scheme.get('bearerFormat', 'token')}>`")
        else:
            described.append(f"`{name}`")
    return ", ".join(described)


def _operation(
    method: str,
    paths: list[str],
    operation: dict[str, Any],
    document: dict[str, Any],
    examples: Examples,
) -> list[str]:
    operation_id = operation.get("operationId", f"{method} {paths[0]}")
    title = operation.get("summary") or operation_id
    lines = [f'<a id="{_op_anchor(operation_id)}"></a>', "", f"### {title}", ""]
    lines += [f"`{method.upper()} {path}`  " for path in paths]
    lines += [
        "",
        f"Operation id: `{operation_id}`. Authentication: {_security(operation, document)}.",
        "",
    ]
    if operation.get("description"):
        lines += [str(operation["description"]).strip(), ""]
    lines += _parameters(operation)
    lines += _request_body(operation, examples)
    lines += _responses(operation)
    return lines


def _schema(name: str, schema: dict[str, Any], examples: Examples) -> list[str]:
    lines = [f'<a id="{anchor(name)}"></a>', "", f"### {name}", ""]
    if schema.get("description"):
        lines += [str(schema["description"]).strip(), ""]
    properties = schema.get("properties")
    if not properties:
        lines += [f"Type: {type_of(schema)}.", ""]
        notes = field_notes(schema)
        if notes:
            lines += [notes, ""]
        return lines
    required = set(schema.get("required", []))
    lines += ["| Field | Type | Required | Notes |", "|---|---|---|---|"]
    for field, item in properties.items():
        item = item if isinstance(item, dict) else {}
        lines.append(
            f"| `{field}` | {cell(type_of(item))} | {'yes' if field in required else 'no'} | "
            f"{field_notes(item)} |"
        )
    lines.append("")
    if schema.get("additionalProperties") is False:
        lines += ["Unknown fields are refused (422 `validation_error`).", ""]
    if schema.get("examples"):
        lines += [
            "Example:",
            "",
            "```json",
            json.dumps(schema["examples"][0], indent=2, ensure_ascii=False),
            "```",
            "",
        ]
    return lines


def _webhooks(document: dict[str, Any], examples: Examples) -> list[str]:
    hooks = document.get("webhooks") or {}
    if not hooks:
        return []
    lines = ["## Webhooks", "", "Requests this service sends to your endpoints.", ""]
    for name, item in hooks.items():
        for method in METHODS:
            operation = item.get(method)
            if isinstance(operation, dict):
                lines += _operation(method, [f"(webhook) {name}"], operation, document, examples)
    return lines


def render(document: dict[str, Any]) -> str:
    info = document.get("info") or {}
    components = (document.get("components") or {}).get("schemas") or {}
    examples = Examples(components)
    operations = _operations(document.get("paths") or {})
    lines = [
        f"# {info.get('title', 'API')} reference",
        "",
        "<!-- Generated from the OpenAPI document by `make docs` "
        "(python -m rehabref.openapi.markdown); do not edit by hand. -->",
        "",
        f"Version {info.get('version', '')}. OpenAPI {document.get('openapi', '')}; the running "
        "service serves the partner API's document at `/openapi.json`, the operations API's at "
        "`/openapi-ops.json`, and the interactive reference (Swagger UI) at `/docs`.",
        "",
    ]
    if info.get("description"):
        lines += [str(info["description"]).strip(), ""]
    lines += ["## Operations", "", "| Method | Path | Summary |", "|---|---|---|"]
    for method, paths, operation in operations:
        target = _op_anchor(operation.get("operationId", f"{method} {paths[0]}"))
        summary = cell(operation.get("summary", ""))
        for path in paths:
            lines.append(f"| {method.upper()} | `{path}` | [{summary}](#{target}) |")
    lines.append("")
    tags: dict[str, list[tuple[str, list[str], dict[str, Any]]]] = {}
    for entry in operations:
        tag = (entry[2].get("tags") or ["other"])[0]
        tags.setdefault(tag, []).append(entry)
    for tag, entries in tags.items():
        lines += [f"## {tag[:1].upper()}{tag[1:]}", ""]
        for method, paths, operation in entries:
            lines += _operation(method, paths, operation, document, examples)
    lines += _webhooks(document, examples)
    lines += ["## Schemas", ""]
    for name in sorted(components):
        lines += _schema(name, components[name], examples)
    return "\n".join(lines).rstrip() + "\n"


def main() -> None:
    from rehabref.openapi.document import full_document

    sys.stdout.write(render(full_document()))


if __name__ == "__main__":
    main()
