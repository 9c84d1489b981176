"""Which webhook URLs the service may call (server-side request forgery protection).

A target must be ``http``/``https`` (``https`` only for live endpoints) and its host must
resolve only to public unicast addresses: loopback, private, link-local (with the cloud
metadata address 169.254.169.254), shared (CGNAT 100.64/10), multicast, reserved, unspecified,
documentation and IPv4-mapped/translated IPv6 forms of those are refused. The check runs at
registration and again on every new connection the worker opens (``GuardedBackend``), so a
DNS answer that changes after registration (rebinding) is still refused. Redirects are never
followed.

``REHABREF_ALLOW_LOOPBACK_WEBHOOK_TARGETS=true`` (local development) admits loopback only:
127.0.0.0/8 and ::1, by address or by a name whose every answer is loopback. Everything else
above stays refused with it, because a development machine in a cloud or office network
still reaches metadata services and private hosts that a partner must not be able to probe.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from typing import Any
from urllib.parse import urlsplit

import httpcore

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
RESOLVE_TIMEOUT = 5.0

_EXTRA_BLOCKED = tuple(
    ipaddress.ip_network(net)
    for net in (
        "0.0.0.0/8",  # "this network"
        "100.64.0.0/10",  # shared address space (CGNAT)
        "192.0.0.0/24",  # IETF protocol assignments
        "192.0.2.0/24",  # documentation
        "198.18.0.0/15",  # benchmarking
        "198.51.100.0/24",
        "203.0.113.0/24",
        "240.0.0.0/4",
        "255.255.255.255/32",
        "64:ff9b::/96",  # NAT64 (maps IPv4)
        "64:ff9b:1::/48",
        "100::/64",  # discard
        "2001::/23",  # IETF protocol assignments (Teredo etc.)
        "2001:db8::/32",  # documentation
        "2002::/16",  # 6to4 (embeds IPv4)
        "fc00::/7",  # unique local
        "fe80::/10",  # link-local
        "fec0::/10",  # site-local (deprecated)
        "ff00::/8",  # multicast
    )
)


class TargetRefused(Exception):
    """The URL or the address it resolves to may not be called."""


def is_loopback(address: IPAddress) -> bool:
    """127.0.0.0/8 or ::1 exactly (mapped and translated forms are not loopback here)."""
    if isinstance(address, ipaddress.IPv6Address):
        return address == ipaddress.IPv6Address("::1")
    return address.is_loopback


def address_refusal(address: IPAddress, *, allow_loopback: bool = False) -> str | None:
    """Why this address may not be called, or None when it may: a public unicast address,
    or (with ``allow_loopback``) a loopback one."""
    if allow_loopback and is_loopback(address):
        return None
    if isinstance(address, ipaddress.IPv6Address):
        mapped = address.ipv4_mapped or address.sixtofour
        if mapped is not None:
            return address_refusal(mapped) or "IPv4-mapped IPv6 addresses are not allowed"
        if address.teredo is not None:
            return "Teredo addresses are not allowed"
    checks = (
        (address.is_unspecified, "unspecified"),
        (address.is_loopback, "loopback"),
        (address.is_link_local, "link-local"),
        (address.is_multicast, "multicast"),
        (address.is_private, "private"),
        (address.is_reserved, "reserved"),
        (not address.is_global, "non-global"),
    )
    for refused, kind in checks:
        if refused:
            return f"{kind} address"
    for network in _EXTRA_BLOCKED:
        if address.version == network.version and address in network:
            return "special-purpose address"
    return None


def url_refusal(url: str, *, environment: str) -> str | None:
    """Static checks on the URL text; None when acceptable."""
    if len(url) > 2048:
        return "URL longer than 2048 characters."
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "Not a valid URL."
    if parts.scheme not in {"http", "https"}:
        return "Must be an http or https URL."
    if environment == "live" and parts.scheme != "https":
        return "Live webhook endpoints must use https."
    if not parts.hostname:
        return "The URL has no host."
    if parts.username or parts.password:
        return "Credentials in the URL are not allowed."
    if port == 0:
        return "Not a valid port."
    return None


async def resolve(host: str, port: int) -> list[IPAddress]:
    try:
        literal = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        pass
    else:
        return [literal]
    loop = asyncio.get_running_loop()
    try:
        infos = await asyncio.wait_for(
            loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), timeout=RESOLVE_TIMEOUT
        )
    except (OSError, UnicodeError, TimeoutError) as exc:
        raise TargetRefused("The host name does not resolve.") from exc
    addresses: list[IPAddress] = []
    for info in infos:
        text = str(info[4][0]).split("%", 1)[0]
        address = ipaddress.ip_address(text)
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise TargetRefused("The host name does not resolve.")
    return addresses


async def checked_addresses(host: str, port: int, *, allow_loopback: bool) -> list[IPAddress]:
    """Resolve ``host``; refuse when any answer may not be called (``address_refusal``)."""
    addresses = await resolve(host, port)
    for address in addresses:
        reason = address_refusal(address, allow_loopback=allow_loopback)
        if reason is not None:
            raise TargetRefused(f"The host resolves to a {reason}, which is not allowed.")
    return addresses


async def check_target(url: str, *, environment: str, allow_loopback: bool) -> str | None:
    """Full registration check; returns a field error message or None."""
    problem = url_refusal(url, environment=environment)
    if problem is not None:
        return problem
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        await checked_addresses(parts.hostname or "", port, allow_loopback=allow_loopback)
    except TargetRefused as exc:
        return str(exc)
    return None


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """Resolves and checks every new connection, then connects to the checked address.

    TLS still uses the URL's host name for SNI and certificate checks (httpcore passes it to
    ``start_tls``), so connecting by address does not weaken https.
    """

    def __init__(self, inner: httpcore.AsyncNetworkBackend, *, allow_loopback: bool) -> None:
        self._inner = inner
        self._allow_loopback = allow_loopback

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            addresses = await checked_addresses(host, port, allow_loopback=self._allow_loopback)
        except TargetRefused as exc:
            raise httpcore.ConnectError(f"target refused: {exc}") from exc
        last: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    str(address),
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except httpcore.ConnectError as exc:
                last = exc
        assert last is not None
        raise last

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not webhook targets")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)
