"""Endpoint health policy and the trigger's target rule: pure, no clock, no database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from rehabref.events.endpoint_health import (
    DISABLE_AFTER,
    DISABLED_REASON,
    FAILING_CAP,
    FAILURES_TO_OPEN,
    MAX_OPEN_SECONDS,
    Health,
    Result,
    after,
    circuit,
    fold,
    in_flight_cap,
    open_seconds,
)
from rehabref.sandbox.trigger_targets import target_allowed

T0 = datetime(2026, 11, 24, 8, 0, tzinfo=UTC)


def fail(seconds: float) -> Result:
    return Result(T0 + timedelta(seconds=seconds), ok=False)


def test_circuit_opens_after_consecutive_failures_and_backs_off_longer_each_time():
    health = fold(Health(), [fail(n) for n in range(FAILURES_TO_OPEN - 1)])
    assert circuit(health, now=T0 + timedelta(seconds=5)) == "closed"
    assert health.failing_since == T0 and health.circuit_open_until is None
    health = after(health, fail(10))
    assert health.consecutive_failures == FAILURES_TO_OPEN
    assert health.circuit_open_until == T0 + timedelta(seconds=10 + 30)
    assert circuit(health, now=T0 + timedelta(seconds=39)) == "open"
    assert circuit(health, now=T0 + timedelta(seconds=40)) == "half_open"
    assert [open_seconds(FAILURES_TO_OPEN + n) for n in range(6)] == [30, 60, 120, 240, 480, 600]
    assert open_seconds(10_000) == MAX_OPEN_SECONDS


def test_one_success_closes_the_circuit_and_forgets_the_failures():
    health = fold(Health(), [fail(n) for n in range(FAILURES_TO_OPEN + 2)])
    assert after(health, Result(T0 + timedelta(minutes=5), ok=True)) == Health()


def test_results_are_folded_in_the_order_they_happened():
    success_last = fold(Health(), [Result(T0 + timedelta(seconds=9), ok=True), fail(1), fail(2)])
    assert success_last == Health()


def test_disabled_only_after_the_whole_period_of_failures():
    early = fold(Health(), [fail(0), *[fail(60 * n) for n in range(1, 10)]])
    assert early.disabled_at is None
    almost = after(early, Result(T0 + DISABLE_AFTER - timedelta(seconds=1), ok=False))
    assert almost.disabled_at is None
    at_period = T0 + DISABLE_AFTER
    disabled = after(almost, Result(at_period, ok=False))
    assert disabled.disabled_at == at_period and disabled.disabled_reason == DISABLED_REASON
    # in-flight results arriving after that change nothing, not even a success
    assert after(disabled, Result(at_period + timedelta(seconds=1), ok=True)) == disabled


def test_a_failure_long_after_a_success_is_not_a_period_of_failure():
    one = after(Health(), Result(T0 + DISABLE_AFTER * 2, ok=False))
    assert one.disabled_at is None and one.failing_since == T0 + DISABLE_AFTER * 2
    # few failures spread over a day do not disable either: the circuit must be open too
    sparse = fold(Health(), [fail(0), fail(DISABLE_AFTER.total_seconds() + 1)])
    assert sparse.consecutive_failures == 2 and sparse.disabled_at is None


def test_failing_endpoint_gets_fewer_sends_and_half_open_one_probe():
    assert in_flight_cap(0, cap=8) == 8
    assert in_flight_cap(1, cap=8) == FAILING_CAP == 2
    assert in_flight_cap(FAILURES_TO_OPEN - 1, cap=8) == 2
    assert in_flight_cap(1, cap=1) == 1
    assert in_flight_cap(FAILURES_TO_OPEN, cap=8) == 1


def test_trigger_targets_registered_urls_exactly_or_allowed_origins():
    registered = ["https://partner.example/hooks"]
    assert target_allowed("https://partner.example/hooks", registered=registered, origins=())
    assert not target_allowed("https://partner.example/other", registered=registered, origins=())
    assert not target_allowed("https://victim.example/", registered=registered, origins=())
    origins = ["http://127.0.0.1", "https://hooks.example:8443"]
    assert target_allowed("http://127.0.0.1:9000/x", registered=[], origins=origins)
    assert target_allowed("https://HOOKS.example:8443/a?b=1", registered=[], origins=origins)
    assert not target_allowed("https://hooks.example/a", registered=[], origins=origins)
    assert not target_allowed("https://127.0.0.1/x", registered=[], origins=origins)
    assert not target_allowed("http://127.0.0.1.evil.example/", registered=[], origins=origins)
    assert not target_allowed("http://127.0.0.1:bad/", registered=[], origins=origins)
    assert not target_allowed("ftp://127.0.0.1/", registered=[], origins=origins)
