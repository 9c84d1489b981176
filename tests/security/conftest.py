"""Fixtures for the security tests: a coordinator token (from the CLI, as operators make one)."""

from tests.support.operators import operator_token  # noqa: F401 (a fixture)
