"""Property-based conformance: schemathesis drives every documented operation of /openapi.json.

Generated requests (valid and invalid bodies, query strings and headers) go to a real server
with a valid secret key. The checks fail on any 5xx, on a status code or content type the
document does not list, and on a response body or header that violates its schema.

schemathesis' own pytest integration (``from_fixture``) does not run under pytest 9, so each
operation is driven through ``APIOperation.as_strategy`` with Hypothesis directly.
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
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.support.operators import create_operator
from tests.support.partners import onboard
from tests.support.server import ServerProcess

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
MAX_EXAMPLES = 50


@pytest.fixture(scope="module")
def credentials(database_url: str) -> dict[str, str]:
    """A partner secret key for partner operations and an operator token for /api/v1/ops."""
    return {
        "partner": str(onboard(database_url, name="Schemathesis Clinic")["keys"]["sk_test"]),
        "operator": create_operator(database_url, "Schemathesis Coordinator"),
    }


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_every_operation_conforms(
    server: ServerProcess, credentials: dict[str, str], mode: GenerationMode
) -> None:
    failures: dict[str, str] = {}
    operations = 0
    calls: list[int] = []
    results = [
        result
        for document in ("/openapi.json", "/openapi-ops.json")
        for result in schemathesis.openapi.from_url(
            f"{server.base_url}{document}"
        ).get_all_operations()
    ]
    for result in results:
        operation = result.ok()
        operations += 1
        who = "operator" if operation.path.startswith("/api/v1/ops/") else "partner"
        headers = {"Authorization": f"Bearer {credentials[who]}"}

        @hypothesis.settings(
            max_examples=MAX_EXAMPLES,
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
        except Exception as exc:  # collect every operation's failure, then report them together
            failures[operation.label] = f"{type(exc).__name__}: {exc}"[:3000]
    assert operations >= 4
    assert len(calls) >= operations * 10, "schemathesis sent too few requests to mean anything"
    if mode == GenerationMode.POSITIVE:
        assert 201 in calls, "no generated referral was ever accepted"
    assert not failures, "\n\n".join(f"{label}\n{text}" for label, text in failures.items())
