"""The client address that per-IP limits count against, behind trusted reverse proxies.

By default it is the TCP peer and ``X-Forwarded-For`` is ignored: anyone can send that header.
Behind a reverse proxy every patient would then share the proxy's address (and its limits),
so an operator lists the proxies in REHABREF_TRUSTED_PROXIES. A request whose peer is one of
them is attributed to the nearest address in ``X-Forwarded-For`` that is not: the header is
read from the right, because each proxy appends the address it received the request from,
and everything left of the first untrusted address may have been written by the client.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import TypeAlias

Network: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network
Address: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address


def parse_trusted_proxies(text: str) -> tuple[Network, ...]:
    """Comma-separated addresses or CIDR networks, e.g. ``10.0.0.0/8, 2001:db8::1``."""
    networks = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ValueError(
                f"REHABREF_TRUSTED_PROXIES: {item!r} is not an IP address or CIDR network"
            ) from None
    return tuple(networks)


def client_address(
    peer: str | None, forwarded_for: Iterable[str], trusted: tuple[Network, ...]
) -> str:
    """``peer``, or when it is a trusted proxy, the client it forwarded for.

    ``forwarded_for``: every ``X-Forwarded-For`` header value, in the order received.
    """
    if peer is None:
        return "unknown"
    if not trusted or not _is_trusted(_address(peer), trusted):
        return peer
    nearest = peer
    hops = [hop for value in forwarded_for for hop in value.split(",")]
    for hop in reversed(hops):
        address = _address(hop)
        if address is None:
            # Not an address: the chain cannot be followed further; the last trusted hop
            # is the best that is known.
            return nearest
        nearest = str(address)
        if not _is_trusted(address, trusted):
            return nearest
    return nearest


def _is_trusted(address: Address | None, trusted: tuple[Network, ...]) -> bool:
    return address is not None and any(address in network for network in trusted)


def _address(text: str) -> Address | None:
    """An address as proxies write it: plain, or with a port (``1.2.3.4:80``, ``[::1]:80``)."""
    text = text.strip()
    if text.startswith("["):
        text = text[1:].partition("]")[0]
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address
