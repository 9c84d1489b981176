"""Schemathesis over the ops operations with a real operator token (the shared conformance
test uses a partner key, which only ever reaches the 401 branch here).

Random and invalid bodies, paths and query strings must never give a 5xx, and every answer
must match the documented status codes and schemas.
"""

from __future__ import annotations

from typing import Any

import hypothesis
import pytest
import schemathesis
from hypothesis import HealthCheck, given
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.support.api import created
from tests.support.server import ServerProcess

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
MINE = (
    "/api/v1/ops/referrals",
    "/api/v1/ops/contact-tasks",
    "/api/v1/ops/data-subject-requests",
)


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_ops_operations_conform(
    server: ServerProcess, client: Any, partner: Any, operator_token: str, mode: GenerationMode
) -> None:
    created(client, partner["keys"]["sk_test"], route="contact")  # something to list
    schema = schemathesis.openapi.from_url(f"{server.base_url}/openapi-ops.json")
    headers = {"Authorization": f"Bearer {operator_token}"}
    failures: dict[str, str] = {}
    calls: list[int] = []
    for result in schema.get_all_operations():
        operation = result.ok()
        if not operation.path.startswith(MINE):
            continue

        @hypothesis.settings(
            max_examples=40,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
            phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
        )
        @given(case=operation.as_strategy(generation_mode=mode))
        def exercise(case: Any) -> None:
            calls.append(
                case.call_and_validate(
                    base_url=server.base_url, headers=headers, checks=CHECKS
                ).status_code
            )

        try:
            exercise()
        except Exception as exc:
            failures[operation.label] = f"{type(exc).__name__}: {exc}"[:3000]
    print(mode, len(calls), sorted(set(calls)))
    assert len(calls) > 100
    if mode == GenerationMode.POSITIVE:
        assert 200 in calls
    assert not failures, "\n\n".join(f"{label}\n{text}" for label, text in failures.items())
