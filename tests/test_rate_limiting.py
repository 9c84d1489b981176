"""Fixed-window counting in memory and in Redis, and failing open (rehabref.rate_limiting)."""

from __future__ import annotations

import logging
import uuid

import pytest
import redis
from limits import parse, parse_many

from rehabref.rate_limiting import MemoryWindows, RateLimiter
from tests.support.redis_server import REDIS_URL, redis_available
from tests.support.server import free_port


async def hits(limiter: RateLimiter, rule: str, key: str, count: int) -> list:
    return [await limiter.hit(parse(rule), "test", key) for _ in range(count)]


async def test_each_hit_is_judged_and_reported_by_its_own_count_in_memory():
    verdicts = await hits(RateLimiter(None), "3/minute", "client-a", 4)
    assert [v.allowed for v in verdicts] == [True, True, True, False]
    assert [v.remaining for v in verdicts] == [2, 1, 0, 0]
    assert {v.limit for v in verdicts} == {3}
    assert all(1 <= v.reset_seconds <= 60 for v in verdicts)


async def test_keys_and_rules_count_separately():
    limiter = RateLimiter(None)
    await hits(limiter, "1/minute", "client-a", 1)
    assert not (await limiter.hit(parse("1/minute"), "test", "client-a")).allowed
    assert (await limiter.hit(parse("1/minute"), "test", "client-b")).allowed
    assert (await limiter.hit(parse("1/minute"), "other", "client-a")).allowed


async def test_counters_are_shared_through_redis():
    if not redis_available():
        pytest.skip(f"Redis is not reachable at {REDIS_URL}")
    key = f"client-{uuid.uuid4().hex}"
    # Two limiters stand for two API nodes.
    first, second = RateLimiter(REDIS_URL), RateLimiter(REDIS_URL)
    verdicts = [await first.hit(parse("3/minute"), "test", key) for _ in range(2)]
    verdicts += [await second.hit(parse("3/minute"), "test", key) for _ in range(2)]
    assert [v.allowed for v in verdicts] == [True, True, True, False]
    assert [v.remaining for v in verdicts] == [2, 1, 0, 0]
    assert all(1 <= v.reset_seconds <= 60 for v in verdicts)
    stored = redis.Redis.from_url(REDIS_URL).keys(f"*{key}*")
    assert len(stored) == 1


async def test_an_unreachable_storage_lets_hits_through_and_warns_once(caplog):
    limiter = RateLimiter(f"redis://127.0.0.1:{free_port()}/0")
    with caplog.at_level(logging.WARNING, logger="rehabref.rate_limiting"):
        verdicts = await hits(limiter, "1/minute", "client-a", 3)
    assert verdicts == [None, None, None]
    warnings = [r for r in caplog.records if "rate limit storage unavailable" in r.getMessage()]
    assert len(warnings) == 1
    assert warnings[0].error_type  # type: ignore[attr-defined]


async def test_several_limits_all_count_and_the_tightest_is_reported():
    limiter = RateLimiter(None)
    rules = parse_many("5/minute;2/minute")
    verdicts = [await limiter.hit_all(rules, "test", "client-a") for _ in range(3)]
    assert [v.allowed for v in verdicts] == [True, True, False]
    assert [(v.limit, v.remaining) for v in verdicts] == [(2, 1), (2, 0), (2, 0)]
    assert verdicts[-1].window_seconds == 60


class FakeClock:
    def __init__(self, now: float) -> None:
        self.now = now

    def time(self) -> float:
        return self.now


def test_a_memory_window_opens_at_the_first_hit_and_starts_again_after_its_period(monkeypatch):
    clock = FakeClock(1_000.0)
    monkeypatch.setattr("rehabref.rate_limiting.time", clock)
    windows = MemoryWindows()
    assert windows.hit("k", 60) == (1, 1_060.0)
    clock.now = 1_059.9
    assert windows.hit("k", 60) == (2, 1_060.0)
    clock.now = 1_060.0  # the window has ended: a new one opens with this hit
    assert windows.hit("k", 60) == (1, 1_120.0)
    assert windows.hit("other", 1) == (1, 1_061.0)


def test_ended_memory_windows_are_swept_out(monkeypatch):
    clock = FakeClock(1_000.0)
    monkeypatch.setattr("rehabref.rate_limiting.time", clock)
    windows = MemoryWindows()
    for n in range(1_000):
        windows.hit(f"client-{n}", 10)
    assert len(windows) == 1_000
    clock.now = 1_011.0  # every window ended; the next hit sweeps them
    windows.hit("client-new", 10)
    assert len(windows) == 1


async def test_a_one_second_window_reports_a_one_second_wait():
    limiter = RateLimiter(None)
    verdicts = await hits(limiter, "2/second", "client-a", 3)
    assert [v.allowed for v in verdicts] == [True, True, False]
    assert verdicts[-1].reset_seconds == 1
