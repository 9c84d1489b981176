"""Schemathesis over the Shape G / eligibility operations only, with a g-contract test key.

The suite-wide run (tests/openapi) covers every operation with a v1 partner; this one drives
create (both shapes' schemas), retrieve and eligibility as a Shape G partner, checking for
5xx and responses outside the documented statuses and schemas.
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

from tests.support.partners import onboard
from tests.support.server import ServerProcess

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
OPERATIONS = {"createReferral", "getReferral", "checkEligibility"}


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_shape_g_operations_conform(server: ServerProcess, database_url: str, mode: Any) -> None:
    key = onboard(database_url, name="Schemathesis G", contract="g")["keys"]["sk_test"]
    schema = schemathesis.openapi.from_url(f"{server.base_url}/openapi.json")
    headers = {"Authorization": f"Bearer {key}"}
    failures: dict[str, str] = {}
    statuses: list[int] = []
    seen = set()
    for result in schema.get_all_operations():
        operation = result.ok()
        operation_id = operation.definition.raw.get("operationId")
        if operation_id not in OPERATIONS:
            continue
        seen.add(operation_id)

        @hypothesis.settings(
            max_examples=60,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
            phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
        )
        @given(case=operation.as_strategy(generation_mode=mode))
        def exercise(case: Any) -> None:
            response = case.call_and_validate(
                base_url=server.base_url, headers=headers, checks=CHECKS
            )
            statuses.append(response.status_code)

        try:
            exercise()
        except Exception as exc:
            failures[operation.label] = f"{type(exc).__name__}: {exc}"[:3000]
    print(mode, len(statuses), sorted(set(statuses)))
    assert seen == OPERATIONS
    assert not failures, "\n\n".join(f"{label}\n{text}" for label, text in failures.items())
