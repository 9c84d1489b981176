"""The local Redis the rate-limit tests share counters through (skipped when unreachable)."""

from __future__ import annotations

import os

import redis

REDIS_URL = os.environ.get("REHABREF_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def redis_available() -> bool:
    try:
        return bool(redis.Redis.from_url(REDIS_URL, socket_timeout=1).ping())
    except redis.RedisError:
        return False
