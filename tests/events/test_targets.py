"""SSRF protection: the address checker, the URL rules, and a server with the flag off."""

from __future__ import annotations

import asyncio
import ipaddress

import httpx
import pytest

from rehabref.events.sender import make_client, post
from rehabref.events.targets import address_refusal, check_target, url_refusal
from tests.conftest import auth
from tests.support.receiver import Receiver
from tests.support.server import ServerProcess

REFUSED = [
    "127.0.0.1",
    "127.8.9.10",
    "10.0.0.1",
    "172.16.5.4",
    "192.168.1.1",
    "169.254.169.254",  # cloud metadata
    "100.64.0.1",  # CGNAT
    "100.127.255.254",
    "0.0.0.0",
    "224.0.0.1",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    "192.0.2.10",
    "198.18.0.1",
    "::1",
    "::",
    "fe80::1",
    "fc00::1",
    "fd12:3456::1",
    "ff02::1",
    "::ffff:127.0.0.1",  # IPv4-mapped loopback
    "::ffff:10.0.0.1",
    "::ffff:8.8.8.8",  # mapped forms are refused outright
    "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
    "2002:a00:1::1",  # 6to4 of 10.0.0.1
    "2001:db8::1",
]
ALLOWED = ["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111"]


@pytest.mark.parametrize("address", REFUSED)
def test_non_public_addresses_are_refused(address):
    assert address_refusal(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize("address", ALLOWED)
def test_public_addresses_are_allowed(address):
    assert address_refusal(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(
    ("url", "environment"),
    [
        ("ftp://example.com/x", "test"),
        ("file:///etc/passwd", "test"),
        ("gopher://example.com", "test"),
        ("http://example.com/hook", "live"),  # live must be https
        ("https://user:pw@example.com/", "test"),
        ("https:///nohost", "test"),
        ("not a url", "test"),
        ("http://example.com:99999/", "test"),
    ],
)
def test_url_rules(url, environment):
    assert url_refusal(url, environment=environment) is not None


def test_resolution_is_checked():
    async def check(url: str) -> str | None:
        return await check_target(url, environment="test", allow_loopback=False)

    assert asyncio.run(check("http://localhost:8080/hook")) is not None
    assert asyncio.run(check("http://[::1]/hook")) is not None
    assert asyncio.run(check("http://2130706433/hook")) is not None  # 127.0.0.1 as an integer
    assert asyncio.run(check("http://no-such-host.invalid/hook")) is not None
    assert asyncio.run(check("http://127.0.0.1/hook")) is not None
    assert asyncio.run(check("http://8.8.8.8/hook")) is None
    flag_on = check_target("http://127.0.0.1/h", environment="test", allow_loopback=True)
    assert asyncio.run(flag_on) is None


def test_the_delivery_client_refuses_private_addresses_at_connect_time():
    receiver = Receiver().start()

    # By address, and by a name that resolves to loopback when the connection is made.
    by_name = receiver.url.replace("127.0.0.1", "localhost")

    async def attempt() -> tuple[list[object], object]:
        guarded = make_client(allow_loopback=False)
        allowed = make_client(allow_loopback=True)
        try:
            refused = [await post(guarded, url, b"{}", {}) for url in (receiver.url, by_name)]
            sent = await post(allowed, receiver.url, b"{}", {})
        finally:
            await guarded.aclose()
            await allowed.aclose()
        return refused, sent

    try:
        refused, sent = asyncio.run(attempt())
    finally:
        receiver.stop()
    for result in refused:
        assert result.status_code is None  # type: ignore[attr-defined]
        assert result.error.startswith("connect_error: target refused")  # type: ignore[attr-defined]
    assert sent.status_code == 200  # type: ignore[attr-defined]
    assert len(receiver.received) == 1


def test_redirects_are_not_followed():
    target = Receiver().start()
    redirecting = Receiver(behaviour=lambda _r, _i: (302, {"Location": target.url}, 0.0)).start()

    async def attempt() -> object:
        client = make_client(allow_loopback=True)
        try:
            return await post(client, redirecting.url, b"{}", {})
        finally:
            await client.aclose()

    try:
        result = asyncio.run(attempt())
    finally:
        target.stop()
        redirecting.stop()
    assert result.status_code == 302 and not result.ok  # type: ignore[attr-defined]
    assert target.received == []


@pytest.fixture(scope="module")
def strict_server(database_url, tmp_path_factory):
    server = ServerProcess(
        database_url,
        tmp_path_factory.mktemp("strict") / "server.log",
        REHABREF_ALLOW_LOOPBACK_WEBHOOK_TARGETS="false",
    ).start("--no-worker")
    yield server
    server.stop()


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/hook",
        "http://localhost/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://10.1.2.3/hook",
        "http://100.64.1.1/hook",
        "http://[::1]/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "http://0.0.0.0/hook",
    ],
)
def test_registration_refuses_private_targets_with_flag_off(strict_server, partner, url):
    with httpx.Client(base_url=strict_server.base_url, timeout=30) as http:
        response = http.post(
            "/api/v1/partners/webhook-endpoints",
            json={"url": url},
            headers=auth(partner["keys"]["sk_test"]),
        )
        assert response.status_code == 422, response.text
        assert "url" in response.json()["error"]["fields"]
        trigger = http.post(
            "/api/v1/sandbox/trigger-webhook",
            json={"event": "referral.created", "target_url": url},
            headers=auth(partner["keys"]["sk_test"]),
        )
        assert trigger.status_code == 422
        assert "target_url" in trigger.json()["error"]["fields"]
