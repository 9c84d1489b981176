"""JSON Schema rendered as short human-readable text: types, constraints, examples.

Used by the Markdown API reference (``rehabref.openapi.markdown``).
"""

from __future__ import annotations

import json
import re
from typing import Any

_REF_PREFIX = "#/components/schemas/"
_MAX_EXAMPLE_DEPTH = 12


def cell(text: str) -> str:
    """Text safe inside one Markdown table cell."""
    return re.sub(r"\s+", " ", text).replace("|", "\\|").strip()


def anchor(name: str) -> str:
    return "schema-" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def ref_name(ref: str) -> str:
    return ref.removeprefix(_REF_PREFIX).rsplit("/", 1)[-1]


def code(value: Any) -> str:
    return "`" + (value if isinstance(value, str) else json.dumps(value)) + "`"


def type_of(schema: Any) -> str:
    """A short, human-readable type for a JSON Schema, with links to component schemas."""
    if not isinstance(schema, dict) or not schema:
        return "any"
    if "$ref" in schema:
        name = ref_name(schema["$ref"])
        return f"[{name}](#{anchor(name)})"
    for combiner, joiner in (("anyOf", " or "), ("oneOf", " or "), ("allOf", " and ")):
        if combiner in schema:
            parts = [type_of(item) for item in schema[combiner]]
            nullable = "null" in parts
            parts = [part for part in parts if part != "null"]
            text = joiner.join(dict.fromkeys(parts)) or "null"
            return f"{text} or null" if nullable else text
    if "const" in schema:
        return f"constant {code(schema['const'])}"
    if "enum" in schema:
        return "one of " + ", ".join(code(value) for value in schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return " or ".join(type_of({**schema, "type": item}) for item in kind)
    if kind == "array":
        return f"array of {type_of(schema.get('items'))}"
    if kind == "object" or "properties" in schema:
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and extra and "properties" not in schema:
            return f"object (map of string to {type_of(extra)})"
        return "object"
    if isinstance(kind, str):
        fmt = schema.get("format")
        return f"{kind} ({fmt})" if fmt else kind
    return "any"


def _constraints(schema: dict[str, Any]) -> list[str]:
    notes: list[str] = []
    for branch in schema.get("anyOf", []) + schema.get("oneOf", []):
        if isinstance(branch, dict) and branch.get("type") != "null":
            notes.extend(_constraints(branch))
    low, high = schema.get("minLength"), schema.get("maxLength")
    if low is not None and high is not None:
        notes.append(f"{low} to {high} characters")
    elif high is not None:
        notes.append(f"at most {high} characters")
    elif low is not None:
        notes.append(f"at least {low} characters")
    for key, label in (
        ("minimum", ">="),
        ("exclusiveMinimum", ">"),
        ("maximum", "<="),
        ("exclusiveMaximum", "<"),
    ):
        if key in schema:
            notes.append(f"{label} {schema[key]}")
    if "minItems" in schema:
        notes.append(f"at least {schema['minItems']} items")
    if "maxItems" in schema:
        notes.append(f"at most {schema['maxItems']} items")
    if "pattern" in schema:
        notes.append(f"pattern {code(schema['pattern'])}")
    return notes


def _sentences(description: str, extras: list[str]) -> str:
    """A description followed by short notes: "Page size. Range: >= 1; <= 100."."""
    description = description.strip()
    if not extras:
        return cell(description)
    tail = "; ".join(extras)
    if not description:
        return cell(tail[:1].upper() + tail[1:] + ".")
    if description[-1] not in ".!?":
        description += "."
    return cell(f"{description} {tail[:1].upper()}{tail[1:]}.")


def field_notes(schema: dict[str, Any], description: str | None = None) -> str:
    parts: list[str] = list(_constraints(schema))
    if "default" in schema and schema["default"] is not None:
        parts.append(f"default {code(schema['default'])}")
    if schema.get("examples"):
        parts.append(f"example {code(schema['examples'][0])}")
    elif "example" in schema:
        parts.append(f"example {code(schema['example'])}")
    text = schema.get("description", "") if description is None else description
    return _sentences(str(text or ""), parts)


class Examples:
    """Examples for request bodies: the schema's own, or one built from the schema."""

    def __init__(self, components: dict[str, Any]) -> None:
        self.components = components

    def of(self, schema: Any, depth: int = 0) -> Any:
        if not isinstance(schema, dict) or depth > _MAX_EXAMPLE_DEPTH:
            return None
        if schema.get("examples"):
            return schema["examples"][0]
        for key in ("example", "const", "default"):
            if key in schema and schema[key] is not None:
                return schema[key]
        if "$ref" in schema:
            return self.of(self.components.get(ref_name(schema["$ref"])), depth + 1)
        if schema.get("enum"):
            return schema["enum"][0]
        for combiner in ("oneOf", "anyOf", "allOf"):
            for branch in schema.get(combiner, []):
                if isinstance(branch, dict) and branch.get("type") != "null":
                    return self.of(branch, depth + 1)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((item for item in kind if item != "null"), None)
        if kind == "object" or "properties" in schema:
            return {
                name: self.of(item, depth + 1)
                for name, item in schema.get("properties", {}).items()
            }
        if kind == "array":
            return [self.of(schema.get("items"), depth + 1)] * max(1, schema.get("minItems", 1))
        if kind == "string":
            return {
                "date-time": "2026-01-31T09:30:00Z",
                "date": "2026-01-31",
                "uri": "https://example.com/webhooks",
                "email": "patient@example.com",
            }.get(str(schema.get("format")), "string")
        if kind in ("integer", "number"):
            return schema.get("minimum", 0)
        if kind == "boolean":
            return True
        return None

    def resolve(self, schema: Any) -> Any:
        if isinstance(schema, dict) and "$ref" in schema:
            return self.components.get(ref_name(schema["$ref"]), {})
        return schema

    def alternatives(self, schema: Any) -> list[Any]:
        """The branches of a oneOf/anyOf body (one example each), else the schema itself."""
        resolved = self.resolve(schema)
        if isinstance(resolved, dict) and not resolved.get("examples"):
            for combiner in ("oneOf", "anyOf"):
                branches = [
                    branch
                    for branch in resolved.get(combiner, [])
                    if isinstance(branch, dict) and branch.get("type") != "null"
                ]
                if len(branches) > 1:
                    return branches
        return [schema]

    def has_own(self, schema: Any) -> bool:
        if not isinstance(schema, dict):
            return False
        if "$ref" in schema:
            return self.has_own(self.components.get(ref_name(schema["$ref"])))
        return bool(schema.get("examples")) or "example" in schema
