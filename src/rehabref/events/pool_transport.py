"""An httpx transport over an httpcore connection pool made by the caller.

httpx's own transport builds its pool itself and offers no option for the pool's network
backend; the delivery client needs one (``targets.GuardedBackend``). This transport takes
the pool instead, and does what httpx's does around it: requests and responses converted
between the two libraries, httpcore's errors raised as the matching httpx errors.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Protocol, runtime_checkable

import httpcore
import httpx

# Most specific first: a ConnectTimeout is also a TimeoutException, and must stay the former.
_HTTPX_ERRORS: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextmanager
def _as_httpx_errors() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        for core_error, httpx_error in _HTTPX_ERRORS:
            if isinstance(exc, core_error):
                raise httpx_error(str(exc)) from exc
        raise


@runtime_checkable
class _Closable(Protocol):
    async def aclose(self) -> None: ...


class _ResponseBody(httpx.AsyncByteStream):
    def __init__(self, chunks: AsyncIterable[bytes]) -> None:
        self._chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _as_httpx_errors():
            async for chunk in self._chunks:
                yield chunk

    async def aclose(self) -> None:
        if isinstance(self._chunks, _Closable):  # returns the connection to the pool
            await self._chunks.aclose()


class PoolTransport(httpx.AsyncBaseTransport):
    def __init__(self, pool: httpcore.AsyncConnectionPool) -> None:
        self._pool = pool

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if not isinstance(request.stream, httpx.AsyncByteStream):
            raise TypeError("an async transport needs an async request body")
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _as_httpx_errors():
            response = await self._pool.handle_async_request(core_request)
        if not isinstance(response.stream, AsyncIterable):
            raise TypeError("an async pool answered with a sync body")
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_ResponseBody(response.stream),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()
