"""Fixtures for care tests: an operator token and a physiotherapist in Lagos."""

from __future__ import annotations

import pytest

from tests.support.care import operator_token, ops, physio_body


@pytest.fixture(scope="session")
def op_headers(database_url):
    return ops(operator_token(database_url))


@pytest.fixture
def physio(client, op_headers):
    response = client.post(
        "/api/v1/ops/physiotherapists", json=physio_body(name="Kemi Adeyemi"), headers=op_headers
    )
    assert response.status_code == 201, response.text
    return response.json()
