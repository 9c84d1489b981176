"""Values looked up on demand and kept for a few seconds, with one lookup per key at a time.

When an entry expires under load, every caller holding its key waits for the same one lookup:
a worker with dozens of requests (or deliveries) in flight would otherwise send dozens of
identical queries at once, each of which may first have to open a pool connection.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable
from functools import partial
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class ExpiringCache(Generic[K, V]):
    def __init__(self, *, ttl_seconds: float, max_entries: int = 10_000) -> None:
        self._ttl = ttl_seconds
        self._max_entries = max_entries
        self._entries: dict[K, tuple[float, V]] = {}
        self._lookups: dict[K, asyncio.Task[V]] = {}

    async def get(self, key: K, look_up: Callable[[K], Awaitable[V]]) -> V:
        """The cached value of ``key``, or what ``look_up(key)`` returns, shared by concurrent
        callers. A failed lookup is not cached: its error reaches every caller waiting."""
        entry = self._entries.get(key)
        if entry is not None and entry[0] > time.monotonic():
            return entry[1]
        lookup = self._lookups.get(key)
        if lookup is None:
            lookup = self._lookups[key] = asyncio.ensure_future(self._look_up(key, look_up))
            lookup.add_done_callback(partial(self._finished, key))
        # Shielded: a caller that goes away (a client disconnect) must not cancel the lookup
        # other callers are waiting for.
        return await asyncio.shield(lookup)

    def clear(self) -> None:
        self._entries.clear()
        self._lookups.clear()

    async def _look_up(self, key: K, look_up: Callable[[K], Awaitable[V]]) -> V:
        started = time.monotonic()
        value = await look_up(key)
        if len(self._entries) >= self._max_entries:
            self._entries.clear()
        # Counted from before the lookup, so a change is never seen later than ``ttl_seconds``
        # after the read that missed it.
        self._entries[key] = (started + self._ttl, value)
        return value

    def _finished(self, key: K, lookup: asyncio.Task[V]) -> None:
        if self._lookups.get(key) is lookup:
            del self._lookups[key]
        if not lookup.cancelled():
            lookup.exception()  # retrieved here too, in case every caller went away
