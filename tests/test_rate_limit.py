"""Per-key rate limits (REHABREF_RATE_LIMIT) in memory and in Redis: 429 with an integer
Retry-After and the RateLimit-* headers; other keys are not affected."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest
import redis
from sqlalchemy import text

from tests.links.hosted import create_link, path_of
from tests.support.api import REFERRALS, bearer, error_of
from tests.support.redis_server import REDIS_URL, redis_available
from tests.support.server import ServerProcess, free_port


@pytest.fixture(scope="module", params=["memory", "redis"])
def limited_server(request, database_url, tmp_path_factory) -> Iterator[ServerProcess]:
    env = {"REHABREF_RATE_LIMIT": "5/second"}
    if request.param == "redis":
        if not redis_available():
            pytest.skip(f"Redis is not reachable at {REDIS_URL}")
        env["REHABREF_REDIS_URL"] = REDIS_URL
    log_path = tmp_path_factory.mktemp(f"limit-{request.param}") / "server.log"
    server = ServerProcess(database_url, log_path, **env).start("--no-worker")
    server.storage = request.param  # type: ignore[attr-defined]
    yield server
    server.stop()


def hit_until_limited(http: httpx.Client, key: str, attempts: int = 300) -> list[httpx.Response]:
    """Requests in quick succession until the first 429 (5/second allows five per window)."""
    responses = []
    for _ in range(attempts):
        response = http.get(REFERRALS, headers=bearer(key))
        responses.append(response)
        if response.status_code == 429:
            break
    return responses


def test_over_the_limit_is_429_with_retry_after(limited_server, make_partner):
    key = make_partner()["keys"]["sk_test"]
    with httpx.Client(base_url=limited_server.base_url) as http:
        responses = hit_until_limited(http, key)
    limited = responses[-1]
    error = error_of(limited, 429, "rate_limited")
    assert error["fields"] == {}
    retry_after = limited.headers["retry-after"]
    assert retry_after.isdigit() and int(retry_after) == 1  # the window is one second
    assert limited.headers["ratelimit-limit"] == "5"
    assert limited.headers["ratelimit-remaining"] == "0"
    assert limited.headers["ratelimit-reset"].isdigit()
    allowed = responses[:-1]
    assert len(allowed) >= 5
    assert all(response.status_code == 200 for response in allowed)
    # Within one window the remaining count goes down to zero.
    remaining = [int(response.headers["ratelimit-remaining"]) for response in allowed[-5:]]
    assert remaining == [4, 3, 2, 1, 0]


def test_limits_are_per_key(limited_server, make_partner):
    limited_key, other_key = make_partner()["keys"]["sk_test"], make_partner()["keys"]["sk_test"]
    with httpx.Client(base_url=limited_server.base_url) as http:
        assert hit_until_limited(http, limited_key)[-1].status_code == 429
        assert http.get(REFERRALS, headers=bearer(other_key)).status_code == 200


def test_the_limit_resets_after_the_window(limited_server, make_partner):
    key = make_partner()["keys"]["sk_test"]
    with httpx.Client(base_url=limited_server.base_url) as http:
        limited = hit_until_limited(http, key)[-1]
        assert limited.status_code == 429
        time.sleep(int(limited.headers["retry-after"]) + 0.2)
        assert http.get(REFERRALS, headers=bearer(key)).status_code == 200


def test_counters_live_where_configured(limited_server, make_partner, sql):
    """With REHABREF_REDIS_URL the counter is in Redis (shared by every node); without, not."""
    if not redis_available():
        pytest.skip(f"Redis is not reachable at {REDIS_URL}")
    partner = make_partner()
    with httpx.Client(base_url=limited_server.base_url) as http:
        assert http.get(REFERRALS, headers=bearer(partner["keys"]["sk_test"])).status_code == 200
    with sql.connect() as conn:
        key_ids = (
            conn.execute(
                text("SELECT id FROM api_keys WHERE partner_id = :p"), {"p": partner["partner_id"]}
            )
            .scalars()
            .all()
        )
    client = redis.Redis.from_url(REDIS_URL)
    stored = [name for key_id in key_ids for name in client.keys(f"*{key_id}*")]
    assert len(stored) == (1 if limited_server.storage == "redis" else 0)  # type: ignore[attr-defined]


def test_unreachable_redis_fails_open_with_a_warning(database_url, tmp_path, make_partner):
    """The limiter protects the service; a Redis outage must not turn every call into a 500."""
    log_path = tmp_path / "server.log"
    dead_redis = f"redis://127.0.0.1:{free_port()}/0"
    server = ServerProcess(
        database_url, log_path, REHABREF_RATE_LIMIT="5/second", REHABREF_REDIS_URL=dead_redis
    ).start("--no-worker")
    try:
        key = make_partner()["keys"]["sk_test"]
        with httpx.Client(base_url=server.base_url) as http:
            statuses = [http.get(REFERRALS, headers=bearer(key)).status_code for _ in range(8)]
            # The public pages' per-IP limits share the storage, and fail open the same way.
            link = create_link(http, key)
            page_statuses = [http.get(path_of(link)).status_code for _ in range(3)]
    finally:
        server.stop()
    assert statuses == [200] * 8
    assert page_statuses == [200] * 3
    warnings = [line for line in server.logs().splitlines() if "rate limit storage" in line]
    assert len(warnings) == 1
