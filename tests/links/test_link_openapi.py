"""Schemathesis against the documented referral-link operations only (fast, focused)."""

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

from tests.support.partners import onboard

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_link_operations_conform(server, database_url, mode):
    key = onboard(database_url, name="Link Schema Clinic")["keys"]["sk_test"]
    schema = schemathesis.openapi.from_url(f"{server.base_url}/openapi.json")
    failures: dict[str, str] = {}
    seen = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        if "referral-links" not in operation.path:
            continue
        seen += 1

        @hypothesis.settings(
            max_examples=30,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
            phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
        )
        @given(case=operation.as_strategy(generation_mode=mode))
        def exercise(case: Any) -> None:
            case.call_and_validate(
                base_url=server.base_url, headers={"Authorization": f"Bearer {key}"}, checks=CHECKS
            )

        try:
            exercise()
        except Exception as exc:
            failures[operation.label] = f"{type(exc).__name__}: {exc}"[:3000]
    assert seen == 4
    assert not failures, failures
