"""Fixtures for the physiotherapist app tests: an operator to set up visits."""

from __future__ import annotations

import pytest

from tests.support.care import operator_token, ops


@pytest.fixture(scope="session")
def op_headers(database_url):
    return ops(operator_token(database_url))
