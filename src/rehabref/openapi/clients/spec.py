"""The partner document reduced to what a client needs: operations with their parameters,
body and success type. Shared by both generators."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

REF_PREFIX = "#/components/schemas/"
METHODS = ("get", "post", "put", "patch", "delete")


@dataclass(frozen=True)
class Parameter:
    name: str
    schema: dict[str, Any]
    required: bool
    description: str


@dataclass(frozen=True)
class ClientOperation:
    operation_id: str
    method: str
    path: str
    summary: str
    path_parameters: tuple[Parameter, ...]
    query_parameters: tuple[Parameter, ...]
    idempotency_key: bool
    body: dict[str, Any] | None
    body_required: bool
    result: dict[str, Any] | None

    @property
    def snake_name(self) -> str:
        return re.sub(r"(?<!^)(?=[A-Z])", "_", self.operation_id).lower()


def ref_name(ref: str) -> str:
    return ref.removeprefix(REF_PREFIX)


def _parameter(raw: dict[str, Any]) -> Parameter:
    return Parameter(
        name=raw["name"],
        schema=raw.get("schema", {}),
        required=bool(raw.get("required")),
        description=str(raw.get("description") or ""),
    )


def client_operations(document: dict[str, Any]) -> list[ClientOperation]:
    """Every operation of the document but path aliases, in document order."""
    found: list[ClientOperation] = []
    for path, item in document["paths"].items():
        for method in METHODS:
            raw = item.get(method)
            if raw is None or "x-alias-of" in raw:
                continue
            parameters = raw.get("parameters", [])
            body = raw.get("requestBody")
            result = None
            for status in sorted(raw["responses"]):
                content = raw["responses"][status].get("content", {})
                if status.startswith("2") and "application/json" in content:
                    result = content["application/json"]["schema"]
                    break
            found.append(
                ClientOperation(
                    operation_id=raw["operationId"],
                    method=method,
                    path=path,
                    summary=raw.get("summary", ""),
                    path_parameters=tuple(_parameter(p) for p in parameters if p["in"] == "path"),
                    query_parameters=tuple(_parameter(p) for p in parameters if p["in"] == "query"),
                    idempotency_key=any(p["name"] == "Idempotency-Key" for p in parameters),
                    body=body["content"]["application/json"]["schema"] if body else None,
                    body_required=bool(body and body.get("required")),
                    result=result,
                )
            )
    return found


def event_types(document: dict[str, Any]) -> list[tuple[str, str]]:
    """(event type, envelope schema name) of every webhook."""
    return [
        (
            name,
            ref_name(item["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]),
        )
        for name, item in document.get("webhooks", {}).items()
    ]
