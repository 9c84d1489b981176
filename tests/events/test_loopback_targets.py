"""``REHABREF_ALLOW_LOOPBACK_WEBHOOK_TARGETS``: loopback for local development, and nothing
else. Link-local (cloud metadata), private, shared, unique-local and mapped forms stay refused
with it, by address and by a host name that resolves to them."""

from __future__ import annotations

import asyncio
import ipaddress

import httpx
import pytest

from rehabref.config import ConfigError, load_settings
from rehabref.events.sender import make_client, post
from rehabref.events.targets import address_refusal, check_target
from tests.conftest import auth
from tests.support.receiver import Receiver

LOOPBACK = ["127.0.0.1", "127.8.9.10", "127.255.255.254", "::1"]
STILL_REFUSED = {
    "169.254.169.254": "cloud metadata (link-local)",
    "169.254.0.1": "link-local",
    "fe80::1": "IPv6 link-local",
    "fd00:ec2::254": "AWS IPv6 metadata (unique local)",
    "10.0.0.1": "RFC 1918",
    "172.16.5.4": "RFC 1918",
    "172.31.255.255": "RFC 1918",
    "192.168.1.1": "RFC 1918",
    "100.64.0.1": "CGNAT",
    "100.100.100.200": "Alibaba metadata (CGNAT)",
    "fc00::1": "unique local",
    "0.0.0.0": "unspecified: reaches loopback services on Linux",
    "::": "unspecified",
    "::ffff:127.0.0.1": "IPv4-mapped loopback",
    "::ffff:169.254.169.254": "IPv4-mapped metadata",
    "64:ff9b::a9fe:a9fe": "NAT64 of metadata",
    "2002:a9fe:a9fe::1": "6to4 of metadata",
    "224.0.0.1": "multicast",
    "192.0.2.10": "documentation",
}
# Host names that reach getaddrinfo (not IP literals) and resolve to refused addresses.
NAMES_OF_REFUSED = [
    "2852039166",  # 169.254.169.254 as one integer
    "0xa9.0xfe.0xa9.0xfe",  # the same, in hex parts
    "169.254.43518",  # the same, in the a.b.c form
    "167772161",  # 10.0.0.1
]


@pytest.mark.parametrize("address", LOOPBACK)
def test_loopback_is_allowed_only_with_the_option(address):
    parsed = ipaddress.ip_address(address)
    assert address_refusal(parsed, allow_loopback=True) is None
    assert address_refusal(parsed) is not None


@pytest.mark.parametrize("address", STILL_REFUSED, ids=list(STILL_REFUSED.values()))
def test_other_non_public_addresses_stay_refused_with_the_option(address):
    assert address_refusal(ipaddress.ip_address(address), allow_loopback=True) is not None


@pytest.mark.parametrize("host", NAMES_OF_REFUSED)
def test_names_resolving_to_refused_addresses_stay_refused_with_the_option(host):
    problem = asyncio.run(
        check_target(f"http://{host}/hook", environment="test", allow_loopback=True)
    )
    assert problem is not None and "resolves to" in problem


def test_names_resolving_to_loopback_are_allowed_with_the_option():
    for host in ("localhost", "2130706433", "127.1"):
        url = f"http://{host}:8080/hook"
        assert asyncio.run(check_target(url, environment="test", allow_loopback=True)) is None
        assert asyncio.run(check_target(url, environment="test", allow_loopback=False))


def test_the_delivery_client_with_the_option_reaches_loopback_only():
    receiver = Receiver().start()

    async def attempt() -> tuple[object, list[object]]:
        client = make_client(allow_loopback=True)
        try:
            sent = await post(client, receiver.url.replace("127.0.0.1", "localhost"), b"{}", {})
            refused = [
                await post(client, url, b"{}", {})
                for url in ("http://169.254.169.254/latest/meta-data", "http://10.0.0.1/h")
            ]
        finally:
            await client.aclose()
        return sent, refused

    try:
        sent, refused = asyncio.run(attempt())
    finally:
        receiver.stop()
    assert sent.status_code == 200  # type: ignore[attr-defined]
    for result in refused:
        assert result.error.startswith("connect_error: target refused")  # type: ignore[attr-defined]
    assert len(receiver.received) == 1


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data",
        "http://[fe80::1]/hook",
        "http://10.1.2.3/hook",
        "http://192.168.0.10/hook",
        "http://100.64.1.1/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "http://2852039166/hook",
    ],
)
def test_registration_with_the_option_still_refuses_non_loopback(server, partner, url):
    """The suite's server runs with the option on (tests/support/server.py)."""
    assert server.env["REHABREF_ALLOW_LOOPBACK_WEBHOOK_TARGETS"] == "true"
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
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
        assert trigger.status_code == 422, trigger.text


def test_registration_with_the_option_accepts_a_local_receiver(server, partner):
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        response = http.post(
            "/api/v1/partners/webhook-endpoints",
            json={"url": "http://localhost:4000/hooks/rehabref"},
            headers=auth(partner["keys"]["sk_test"]),
        )
    assert response.status_code == 201, response.text


def test_the_removed_private_targets_flag_stops_start_up():
    with pytest.raises(ConfigError, match="REHABREF_ALLOW_LOOPBACK_WEBHOOK_TARGETS"):
        load_settings({"REHABREF_ALLOW_PRIVATE_WEBHOOK_TARGETS": "true"})
    assert load_settings({}).allow_loopback_webhook_targets is False
    flagged = load_settings({"REHABREF_ALLOW_LOOPBACK_WEBHOOK_TARGETS": "true"})
    assert flagged.allow_loopback_webhook_targets is True
