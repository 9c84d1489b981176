"""Coordinator tokens for the route authentication tests."""

from tests.support.operators import operator_token  # noqa: F401
