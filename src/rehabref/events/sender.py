"""One HTTP attempt of a webhook delivery: pooled client, bounded time, no redirects."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpcore
import httpx

from rehabref.events.pool_transport import PoolTransport
from rehabref.events.targets import GuardedBackend

TIMEOUT = httpx.Timeout(10.0, connect=5.0)
# A hard bound on the whole attempt (httpx's timeouts apply per read, so a target that
# trickles bytes could otherwise hold a send open indefinitely).
TOTAL_SECONDS = 15.0
EXCERPT_BYTES = 1024
# How long an idle connection is kept for the next delivery: httpx's default (httpcore's own
# is forever, and a receiver closes idle connections long before).
KEEPALIVE_SECONDS = 5.0


@dataclass(frozen=True)
class AttemptResult:
    status_code: int | None
    latency_ms: int
    error: str | None
    excerpt: str | None
    retry_after: str | None = None

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def make_client(*, allow_loopback: bool, max_connections: int = 100) -> httpx.AsyncClient:
    """A pooled client whose every new connection goes through the address check."""
    pool = httpcore.AsyncConnectionPool(
        ssl_context=httpx.create_ssl_context(),
        max_connections=max_connections,
        max_keepalive_connections=max_connections,
        keepalive_expiry=KEEPALIVE_SECONDS,
        retries=0,
        network_backend=GuardedBackend(httpcore.AnyIOBackend(), allow_loopback=allow_loopback),
    )
    return httpx.AsyncClient(
        transport=PoolTransport(pool), timeout=TIMEOUT, follow_redirects=False, trust_env=False
    )


def _error_text(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.TimeoutException):
        kind = "timeout"
    elif isinstance(exc, httpx.ConnectError):
        kind = "connect_error"
    else:
        kind = "request_error"
    return _storable(f"{kind}: {text}"[:500])


def _storable(text: str) -> str:
    """Receiver-controlled text without NUL, which PostgreSQL text cannot hold: one such
    answer would fail the whole batch's write, every retry, for every partner in it."""
    return text.replace("\x00", "\ufffd")


async def post(
    client: httpx.AsyncClient, url: str, body: bytes, headers: dict[str, str]
) -> AttemptResult:
    started = time.perf_counter()
    try:
        async with (
            asyncio.timeout(TOTAL_SECONDS),
            client.stream("POST", url, content=body, headers=headers) as response,
        ):
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_raw():
                chunks.append(chunk)
                size += len(chunk)
                if size >= EXCERPT_BYTES:
                    break
            excerpt = _storable(b"".join(chunks)[:EXCERPT_BYTES].decode("utf-8", "replace"))
            latency = int((time.perf_counter() - started) * 1000)
            error = None
            if 300 <= response.status_code < 400:
                error = "redirect not followed"
            return AttemptResult(
                status_code=response.status_code,
                latency_ms=latency,
                error=error,
                excerpt=excerpt or None,
                retry_after=response.headers.get("retry-after"),
            )
    except httpx.HTTPError as exc:
        latency = int((time.perf_counter() - started) * 1000)
        return AttemptResult(None, latency, _error_text(exc), None)
    except TimeoutError:
        latency = int((time.perf_counter() - started) * 1000)
        return AttemptResult(None, latency, f"timeout: no answer within {TOTAL_SECONDS:g} s", None)
    except Exception as exc:  # e.g. an URL httpx cannot use: a failed attempt, not a crash
        latency = int((time.perf_counter() - started) * 1000)
        return AttemptResult(None, latency, f"request_error: {type(exc).__name__}", None)


class ClientLanes:
    """Several small pooled clients; each send takes the least busy one.

    httpcore's connection pool scans all its connections for every request, which costs more
    than the request itself beyond a handful of connections; a few small pools measured
    about 3x faster than one pool of the same total size. Taking the least busy lane (not
    the next in turn) matters when some targets hang: a lane whose connections are all held
    by hanging sends would make the next send, to anyone, wait for a connection.
    """

    def __init__(self, clients: list[httpx.AsyncClient]) -> None:
        self._clients = clients
        self._busy = [0] * len(clients)

    @classmethod
    def create(cls, *, allow_loopback: bool, concurrency: int, per_lane: int = 4) -> ClientLanes:
        lanes = max(1, concurrency // per_lane)
        return cls(
            [
                make_client(allow_loopback=allow_loopback, max_connections=per_lane)
                for _ in range(lanes)
            ]
        )

    @contextlib.asynccontextmanager
    async def lease(self) -> AsyncIterator[httpx.AsyncClient]:
        index = min(range(len(self._clients)), key=self._busy.__getitem__)
        self._busy[index] += 1
        try:
            yield self._clients[index]
        finally:
            self._busy[index] -= 1

    async def aclose(self) -> None:
        for client in self._clients:
            await client.aclose()
