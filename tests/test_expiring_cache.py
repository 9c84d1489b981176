"""ExpiringCache: values kept for their time to live, one lookup per key at a time."""

from __future__ import annotations

import asyncio

import pytest

from rehabref.expiring_cache import ExpiringCache


class Source:
    """Answers lookups with ``key:n`` (n counts lookups of that key); ``gate`` holds them
    until set, and ``failures`` makes that many fail."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}
        self.gate = asyncio.Event()
        self.gate.set()
        self.failures = 0

    async def look_up(self, key: str) -> str:
        self.calls[key] = self.calls.get(key, 0) + 1
        await self.gate.wait()
        if self.failures:
            self.failures -= 1
            raise ConnectionResetError("connection lost")
        return f"{key}:{self.calls[key]}"


async def test_concurrent_callers_of_one_key_share_one_lookup():
    cache: ExpiringCache[str, str] = ExpiringCache(ttl_seconds=60)
    source = Source()
    source.gate.clear()
    waiting = [asyncio.ensure_future(cache.get("a", source.look_up)) for _ in range(50)]
    await asyncio.sleep(0.01)
    source.gate.set()
    assert set(await asyncio.gather(*waiting)) == {"a:1"}
    assert source.calls == {"a": 1}


async def test_a_value_is_kept_for_its_time_to_live_then_looked_up_again():
    cache: ExpiringCache[str, str] = ExpiringCache(ttl_seconds=0.2)
    source = Source()
    assert await cache.get("a", source.look_up) == "a:1"
    assert await cache.get("a", source.look_up) == "a:1"
    await asyncio.sleep(0.25)
    assert await cache.get("a", source.look_up) == "a:2"


async def test_keys_are_looked_up_separately():
    cache: ExpiringCache[str, str] = ExpiringCache(ttl_seconds=60)
    source = Source()
    found = await asyncio.gather(cache.get("a", source.look_up), cache.get("b", source.look_up))
    assert found == ["a:1", "b:1"]


async def test_none_is_a_value_like_any_other():
    cache: ExpiringCache[str, None] = ExpiringCache(ttl_seconds=60)
    calls = 0

    async def nothing(_: str) -> None:
        nonlocal calls
        calls += 1

    assert await cache.get("missing", nothing) is None
    assert await cache.get("missing", nothing) is None
    assert calls == 1


async def test_a_zero_time_to_live_still_shares_concurrent_lookups():
    cache: ExpiringCache[str, str] = ExpiringCache(ttl_seconds=0)
    source = Source()
    assert set(await asyncio.gather(*(cache.get("a", source.look_up) for _ in range(5)))) == {"a:1"}
    assert await cache.get("a", source.look_up) == "a:2"


async def test_a_failed_lookup_reaches_every_caller_and_is_not_kept():
    cache: ExpiringCache[str, str] = ExpiringCache(ttl_seconds=60)
    source = Source()
    source.failures = 1
    outcomes = await asyncio.gather(
        *(cache.get("a", source.look_up) for _ in range(5)), return_exceptions=True
    )
    assert all(isinstance(outcome, ConnectionResetError) for outcome in outcomes)
    assert await cache.get("a", source.look_up) == "a:2"


async def test_a_caller_that_goes_away_does_not_cancel_the_others_lookup():
    cache: ExpiringCache[str, str] = ExpiringCache(ttl_seconds=60)
    source = Source()
    source.gate.clear()
    leaving = asyncio.ensure_future(cache.get("a", source.look_up))
    staying = asyncio.ensure_future(cache.get("a", source.look_up))
    await asyncio.sleep(0.01)
    leaving.cancel()
    await asyncio.sleep(0.01)
    source.gate.set()
    assert await staying == "a:1"
    with pytest.raises(asyncio.CancelledError):
        await leaving
    assert source.calls == {"a": 1}


async def test_a_lookup_whose_every_caller_went_away_still_fills_the_cache():
    cache: ExpiringCache[str, str] = ExpiringCache(ttl_seconds=60)
    source = Source()
    source.gate.clear()
    leaving = asyncio.ensure_future(cache.get("a", source.look_up))
    await asyncio.sleep(0.01)
    leaving.cancel()
    source.gate.set()
    await asyncio.sleep(0.01)
    assert await cache.get("a", source.look_up) == "a:1"
    assert source.calls == {"a": 1}


async def test_clear_forgets_values():
    cache: ExpiringCache[str, str] = ExpiringCache(ttl_seconds=60)
    source = Source()
    await cache.get("a", source.look_up)
    cache.clear()
    assert await cache.get("a", source.look_up) == "a:2"


async def test_the_number_of_entries_is_bounded():
    cache: ExpiringCache[str, str] = ExpiringCache(ttl_seconds=60, max_entries=3)
    source = Source()
    for key in "abcd":
        await cache.get(key, source.look_up)
    # The fourth key found the cache full and emptied it first: "a" is looked up again.
    assert await cache.get("d", source.look_up) == "d:1"
    assert await cache.get("a", source.look_up) == "a:2"
