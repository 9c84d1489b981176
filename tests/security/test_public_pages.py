"""The public pages (``/track/...``, ``/a/...``, ``/calendar/...``) on servers started with
small limits and an https public address: per-IP page limits, and
``Strict-Transport-Security`` when https."""

from __future__ import annotations

import ipaddress
import secrets
from collections.abc import Iterator

import httpx
import pytest

from tests.support.server import ServerProcess

HTTPS_BASE = "https://refer.example.com"


@pytest.fixture(scope="module")
def published(
    database_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    """Behind a proxy on loopback, published over https, 4 page requests a minute per client."""
    process = ServerProcess(
        database_url,
        tmp_path_factory.mktemp("published") / "server.log",
        REHABREF_PUBLIC_BASE_URL=HTTPS_BASE,
        REHABREF_TRUSTED_PROXIES="127.0.0.1",
        REHABREF_PAGE_RATE_LIMIT_IP="4/minute",
    ).start("--no-worker")
    yield process
    process.stop()


def _client_address() -> str:
    """A fresh documentation-range address: each test has its own budget."""
    return str(ipaddress.IPv6Address("2001:db8::") + secrets.randbits(64))


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/track/RR7QK4M9XWD2PH"),
        ("GET", "/track/not-a-code"),
        ("GET", "/a/not.a.token"),
        ("POST", "/a/not.a.token"),
        ("GET", "/calendar/not-a-feed-token-at-all.ics"),
    ],
)
def test_public_pages_are_limited_per_client_address(
    published: ServerProcess, method: str, path: str
) -> None:
    address = _client_address()
    with httpx.Client(base_url=published.base_url, timeout=30) as http:
        statuses = []
        for _ in range(5):
            response = http.request(method, path, headers={"X-Forwarded-For": address})
            statuses.append(response.status_code)
        assert 429 not in statuses[:4], statuses
        assert statuses[4] == 429, statuses
        assert int(response.headers["retry-after"]) >= 1
        assert response.headers["cache-control"] == "no-store"
        # Another client is not affected.
        other = http.request(method, path, headers={"X-Forwarded-For": _client_address()})
        assert other.status_code != 429


def test_tracking_and_assistant_pages_share_the_page_budget(published: ServerProcess) -> None:
    address = {"X-Forwarded-For": _client_address()}
    with httpx.Client(base_url=published.base_url, timeout=30) as http:
        statuses = [http.get("/track/RR7QK4M9XWD2PH", headers=address).status_code]
        statuses += [http.get("/a/not.a.token", headers=address).status_code for _ in range(3)]
        assert 429 not in statuses
        assert http.get("/track/RR7QK4M9XWD2PH", headers=address).status_code == 429


@pytest.mark.parametrize(
    "path", ["/healthz", "/api/v1/partners/referrals", "/track/nope", "/console/login", "/nowhere"]
)
def test_https_deployments_send_strict_transport_security(
    published: ServerProcess, path: str
) -> None:
    response = httpx.get(
        published.base_url + path, headers={"X-Forwarded-For": _client_address()}, timeout=30
    )
    assert response.headers["strict-transport-security"] == "max-age=31536000"


@pytest.mark.parametrize("path", ["/healthz", "/api/v1/partners/referrals", "/track/nope"])
def test_http_deployments_do_not_send_strict_transport_security(
    client: httpx.Client, path: str
) -> None:
    assert "strict-transport-security" not in client.get(path).headers
