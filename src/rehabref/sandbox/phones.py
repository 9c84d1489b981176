"""Sandbox test phone numbers, issued with every sandbox; index i runs scenario i+1."""

from __future__ import annotations

TEST_PHONES: tuple[str, ...] = (
    "+2348099990001",  # 1 instant intake success
    "+2348099990002",  # 2 provider auto-matched
    "+2348099990003",  # 3 session auto-completed
    "+2348099990004",  # 4 ineligible policy
    "+2348099990005",  # 5 webhook failure / replay
)


def scenario_for(phone: str | None) -> int | None:
    """The scenario number (1..5) a test phone runs, or None for any other number."""
    if phone is None:
        return None
    try:
        return TEST_PHONES.index(phone) + 1
    except ValueError:
        return None
