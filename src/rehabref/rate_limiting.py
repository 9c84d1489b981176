"""Fixed-window rate limits (``limits``), shared by API keys and the public pages.

Counters are in process memory, or in Redis when REHABREF_REDIS_URL is set so that every API
node shares them. Redis is reached through ``limits``' storage over redis-py (a project
dependency), not limits' default client (coredis, which is not installed). In memory the
counters are ``MemoryWindows`` below, not limits' memory storage: that one starts an asyncio
task on every hit to sweep ended windows: a hit cost about 14 µs instead of 8, on every request.
If the storage is unreachable, a hit is not counted and the request goes through: the limiter
protects the service and must not take it down; a warning is logged at most once a minute.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

from limits import RateLimitItem
from limits.aio.storage import RedisStorage, Storage
from limits.errors import StorageError

log = logging.getLogger(__name__)

WARN_EVERY_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    limit: int
    window_seconds: int
    remaining: int
    # Whole seconds until the window resets (at least 1): the Retry-After value.
    reset_seconds: int


class _Window:
    __slots__ = ("count", "ends_at")

    def __init__(self, ends_at: float) -> None:
        self.count = 0
        self.ends_at = ends_at


class MemoryWindows:
    """Fixed-window counters in this process, kept as ``limits``' memory storage keeps them: a
    window opens at a key's first hit, lasts the limit's period, and its count starts again
    after it. Ended windows are replaced when next hit and swept out at most once a second."""

    SWEEP_EVERY_SECONDS = 1.0

    def __init__(self) -> None:
        self._windows: dict[str, _Window] = {}
        self._next_sweep = 0.0

    def hit(self, key: str, period_seconds: int) -> tuple[int, float]:
        """Count one hit; the key's count in its window and when the window ends (epoch s)."""
        now = time.time()
        if now >= self._next_sweep:
            self._windows = {k: w for k, w in self._windows.items() if w.ends_at > now}
            self._next_sweep = now + self.SWEEP_EVERY_SECONDS
        window = self._windows.get(key)
        if window is None or window.ends_at <= now:
            window = self._windows[key] = _Window(now + period_seconds)
        window.count += 1
        return window.count, window.ends_at

    def __len__(self) -> int:
        return len(self._windows)


def redis_storage(redis_url: str) -> Storage:
    return RedisStorage(
        f"async+{redis_url}",
        implementation="redispy",
        # Failures surface as StorageError, and a dead server costs half a second at most.
        wrap_exceptions=True,
        socket_timeout=0.5,
        socket_connect_timeout=0.5,
    )


class RateLimiter:
    """Counts hits against ``limits`` items in one storage."""

    def __init__(self, redis_url: str | None) -> None:
        # In this process's memory, or in Redis shared by every process and node.
        self._counters: MemoryWindows | Storage = (
            redis_storage(redis_url) if redis_url else MemoryWindows()
        )
        self._warned_at = -WARN_EVERY_SECONDS

    async def hit_all(self, items: Sequence[RateLimitItem], *identifiers: str) -> Verdict | None:
        """Count one hit against each of several limits (``10/second;300/minute``).

        Allowed when every one allows it. The verdict reported is the refusing limit that
        resets last (its wait is enough for all), or else the one with the least left.
        """
        verdicts = []
        for item in items:
            verdict = await self.hit(item, *identifiers)
            if verdict is None:
                return None
            verdicts.append(verdict)
        refused = [v for v in verdicts if not v.allowed]
        if refused:
            return max(refused, key=lambda v: v.reset_seconds)
        return min(verdicts, key=lambda v: v.remaining)

    async def hit(self, item: RateLimitItem, *identifiers: str) -> Verdict | None:
        """Count one hit for ``identifiers``; None when the storage could not be reached.

        In Redis, two storage operations (increment, then read the window's expiry): the count
        the increment returns is the one this hit is judged and reported by, where ``limits``'
        ``hit`` followed by ``get_window_stats`` costs a third (a Redis round trip each).
        """
        key = item.key_for(*identifiers)
        period = item.get_expiry()
        counters = self._counters
        if isinstance(counters, MemoryWindows):
            count, resets_at = counters.hit(key, period)
        else:
            counted = await self._count_in_storage(counters, key, period)
            if counted is None:
                return None
            count, resets_at = counted
        return Verdict(
            allowed=count <= item.amount,
            limit=item.amount,
            window_seconds=period,
            remaining=max(0, item.amount - count),
            reset_seconds=max(1, math.ceil(resets_at - time.time())),
        )

    async def _count_in_storage(
        self, storage: Storage, key: str, period: int
    ) -> tuple[int, float] | None:
        try:
            count = await storage.incr(key, period)
            resets_at = await storage.get_expiry(key)
        except StorageError as exc:
            now = time.monotonic()
            if now - self._warned_at >= WARN_EVERY_SECONDS:
                self._warned_at = now
                log.warning(
                    "rate limit storage unavailable; not limiting",
                    extra={"error_type": type(exc.storage_error).__name__},
                )
            return None
        return count, resets_at
