"""Retry, fallback and status policy of patient messages, without a clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from rehabref.channels.policy import (
    RETRY_WINDOW,
    fallback_channel,
    next_attempt,
    status_after,
)

T0 = datetime(2026, 11, 24, 9, 0, tzinfo=UTC)


def test_first_retry_waits_the_base_delay_and_doubles_with_added_jitter():
    first = next_attempt(attempts=1, created_at=T0, now=T0, base=5, rng=lambda: 0.0)
    second = next_attempt(attempts=2, created_at=T0, now=T0, base=5, rng=lambda: 0.0)
    jittered = next_attempt(attempts=1, created_at=T0, now=T0, base=5, rng=lambda: 0.99)
    assert first == T0 + timedelta(seconds=5)
    assert second == T0 + timedelta(seconds=10)
    assert T0 + timedelta(seconds=5) < jittered < T0 + timedelta(seconds=10)


def test_retry_after_from_the_provider_wins_and_is_capped():
    asked = next_attempt(attempts=1, created_at=T0, now=T0, base=5, rng=lambda: 0, retry_after=42)
    huge = next_attempt(attempts=1, created_at=T0, now=T0, base=5, rng=lambda: 0, retry_after=1e9)
    assert asked == T0 + timedelta(seconds=42)
    assert huge == T0 + timedelta(hours=1)


def test_no_retry_past_the_window():
    late = T0 + RETRY_WINDOW - timedelta(seconds=1)
    assert next_attempt(attempts=3, created_at=T0, now=late, base=5, rng=lambda: 0) is None


@pytest.mark.parametrize(
    ("channel", "available", "expected"),
    [
        ("whatsapp", {"sms"}, "sms"),
        ("whatsapp", set(), None),
        ("sms", {"sms", "whatsapp", "email"}, None),
        ("email", {"sms"}, None),
        ("pigeon", {"sms"}, None),
    ],
)
def test_refused_messages_fall_back_to_sms_then_a_person(channel, available, expected):
    assert fallback_channel(channel, available=lambda c: c in available) == expected


@pytest.mark.parametrize(
    ("current", "reported", "expected"),
    [
        ("sent", "delivered", "delivered"),
        ("delivered", "read", "read"),
        ("read", "delivered", None),  # out of order: kept
        ("delivered", "sent", None),
        ("sent", "queued", None),
        ("sending", "sent", "sent"),
        ("sent", "failed", "failed"),
        ("delivered", "failed", None),  # it arrived: a later failure report changes nothing
        ("sent", "exploded", None),
        ("suppressed", "delivered", None),
    ],
)
def test_statuses_only_move_forward(current, reported, expected):
    assert status_after(current, reported) == expected
