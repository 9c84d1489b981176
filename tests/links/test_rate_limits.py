"""Per-IP and per-link limits on the hosted form, on a server started with small limits."""

from __future__ import annotations

import ipaddress
import secrets

import httpx
import pytest
import redis

from tests.links.hosted import create_link, good_form, path_of, submit
from tests.support.redis_server import REDIS_URL, redis_available
from tests.support.server import ServerProcess


@pytest.fixture
def limited(database_url, tmp_path_factory):
    process = ServerProcess(
        database_url,
        tmp_path_factory.mktemp("limited") / "server.log",
        REHABREF_FORM_RATE_LIMIT_IP="6/minute",
        REHABREF_LINK_RATE_LIMIT="2/hour",
        REHABREF_PAGE_RATE_LIMIT_IP="8/minute",
    ).start("--no-worker")
    yield process
    process.stop()


def test_per_link_then_per_ip_submission_limits(limited, partner, sql):
    with httpx.Client(base_url=limited.base_url, timeout=30) as http:
        key = partner["keys"]["sk_test"]
        first, second = create_link(http, key), create_link(http, key)
        # Posts without a valid form token are refused and do not use up the link's budget.
        junk = [http.post(path_of(first), data=good_form()).status_code for _ in range(2)]
        assert junk == [403, 403]
        statuses = [submit(http, first, first_name=f"P{i}").status_code for i in range(3)]
        assert statuses == [200, 200, 429]  # the link allows 2 per hour
        allowed = submit(http, second)  # another link has its own budget (6th post from this IP)
        assert allowed.status_code == 200
        refused = submit(http, second)  # 7th post from this IP: over 6 per minute
        assert refused.status_code == 429
        assert int(refused.headers["retry-after"]) >= 1
        assert "Please wait" in refused.text
    with sql.connect() as conn:
        from sqlalchemy import text

        made = conn.execute(
            text("SELECT count(*) FROM referrals WHERE link_id IN (:a, :b)"),
            {"a": first["link_id"], "b": second["link_id"]},
        ).scalar_one()
    assert made == 3


def test_page_views_are_limited_per_ip(limited, partner):
    with httpx.Client(base_url=limited.base_url, timeout=30) as http:
        link = create_link(http, partner["keys"]["sk_test"])
        statuses = [http.get(path_of(link)).status_code for _ in range(9)]
        assert statuses == [200] * 8 + [429]


def test_a_forwarded_for_header_from_an_untrusted_peer_does_not_change_the_client(limited, partner):
    """Without REHABREF_TRUSTED_PROXIES, a client cannot reset its budget by naming itself."""
    with httpx.Client(base_url=limited.base_url, timeout=30) as http:
        link = create_link(http, partner["keys"]["sk_test"])
        statuses = [
            http.get(path_of(link), headers={"X-Forwarded-For": random_client()}).status_code
            for _ in range(9)
        ]
        assert statuses == [200] * 8 + [429]


def random_client() -> str:
    """A fresh documentation-range address, so runs sharing a Redis never share a counter."""
    return str(ipaddress.IPv6Address("2001:db8::") + secrets.randbits(64))


@pytest.fixture(params=["memory", "redis"])
def behind_proxy(request, database_url, tmp_path_factory):
    env = {"REHABREF_TRUSTED_PROXIES": "127.0.0.1", "REHABREF_PAGE_RATE_LIMIT_IP": "3/minute"}
    if request.param == "redis":
        if not redis_available():
            pytest.skip(f"Redis is not reachable at {REDIS_URL}")
        env["REHABREF_REDIS_URL"] = REDIS_URL
    process = ServerProcess(
        database_url, tmp_path_factory.mktemp("proxied") / "server.log", **env
    ).start("--no-worker")
    process.storage = request.param  # type: ignore[attr-defined]
    yield process
    process.stop()


def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_budget(behind_proxy, partner):
    first, second = random_client(), random_client()
    with httpx.Client(base_url=behind_proxy.base_url, timeout=30) as http:
        link = create_link(http, partner["keys"]["sk_test"])

        def view(forwarded_for: str) -> int:
            return http.get(path_of(link), headers={"X-Forwarded-For": forwarded_for}).status_code

        assert [view(first) for _ in range(4)] == [200, 200, 200, 429]
        # Naming another client left of the address the proxy appended changes nothing.
        assert view(f"{second}, {first}") == 429
        assert view(second) == 200  # another patient behind the same proxy is not affected
    if behind_proxy.storage == "redis":  # type: ignore[attr-defined]
        stored = redis.Redis.from_url(REDIS_URL).keys(f"*page*{first}*")
        assert len(stored) == 1
