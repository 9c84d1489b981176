"""The address per-IP limits count against, behind trusted proxies (rehabref.client_address)."""

from __future__ import annotations

import pytest

from rehabref.client_address import client_address, parse_trusted_proxies
from rehabref.config import load_settings

PROXIES = parse_trusted_proxies("127.0.0.1, 10.0.0.0/8, 2001:db8::/32")


def test_without_trusted_proxies_the_peer_is_the_client_whatever_the_header_says():
    assert client_address("198.51.100.7", ["203.0.113.9"], ()) == "198.51.100.7"
    # A peer that is not a listed proxy cannot name another client either.
    assert client_address("198.51.100.7", ["203.0.113.9"], PROXIES) == "198.51.100.7"


def test_a_trusted_proxy_forwards_for_the_address_it_appended():
    assert client_address("127.0.0.1", ["203.0.113.9"], PROXIES) == "203.0.113.9"


def test_addresses_a_client_wrote_itself_left_of_the_real_one_are_not_believed():
    # The client sent "X-Forwarded-For: 192.0.2.1"; the proxy appended the address it saw.
    assert client_address("127.0.0.1", ["192.0.2.1, 203.0.113.9"], PROXIES) == "203.0.113.9"


def test_a_chain_of_trusted_proxies_is_followed_to_the_first_untrusted_hop():
    chain = ["192.0.2.1, 203.0.113.9, 10.1.2.3", "10.4.5.6"]  # two headers, in order
    assert client_address("127.0.0.1", chain, PROXIES) == "203.0.113.9"
    assert client_address("10.9.9.9", ["10.1.1.1, 10.2.2.2"], PROXIES) == "10.1.1.1"


def test_missing_or_malformed_headers_fall_back_to_the_nearest_known_hop():
    assert client_address("127.0.0.1", [], PROXIES) == "127.0.0.1"
    assert client_address("127.0.0.1", ["not-an-ip"], PROXIES) == "127.0.0.1"
    assert client_address("127.0.0.1", ["unknown, 10.1.2.3"], PROXIES) == "10.1.2.3"
    assert client_address(None, ["203.0.113.9"], PROXIES) == "unknown"


def test_ports_brackets_ipv6_and_ipv4_mapped_peers():
    assert client_address("127.0.0.1", ["203.0.113.9:51000"], PROXIES) == "203.0.113.9"
    assert client_address("127.0.0.1", ["[2001:db9::5]:443"], PROXIES) == "2001:db9::5"
    assert client_address("2001:db8::1", ["2001:db9::5"], PROXIES) == "2001:db9::5"
    assert client_address("::ffff:10.0.0.2", ["203.0.113.9"], PROXIES) == "203.0.113.9"
    # A mapped address in the header is the IPv4 client it stands for.
    assert client_address("127.0.0.1", ["::ffff:203.0.113.9"], PROXIES) == "203.0.113.9"


def test_the_setting_is_parsed_once_and_refuses_what_is_not_an_address():
    settings = load_settings({"REHABREF_TRUSTED_PROXIES": " 10.0.0.0/8 ,, 127.0.0.1 "})
    assert [str(network) for network in settings.trusted_proxies] == ["10.0.0.0/8", "127.0.0.1/32"]
    assert load_settings({}).trusted_proxies == ()
    with pytest.raises(ValueError, match=r"REHABREF_TRUSTED_PROXIES: 'proxy\.internal'"):
        load_settings({"REHABREF_TRUSTED_PROXIES": "proxy.internal"})
