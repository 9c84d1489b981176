"""Fixtures for these tests: a coordinator token (made with the CLI)."""

from tests.support.operators import operator_token  # noqa: F401
