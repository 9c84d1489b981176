"""The delivery client's transport (events/pool_transport.py) against real sockets: answers,
and httpcore's failures raised as the httpx errors the sender classifies."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import httpx
import pytest

from rehabref.events.sender import make_client, post
from tests.support.receiver import Receiver

Answer = Callable[[socket.socket], None]
BODY = b'{"event": "test"}'


def read_request(conn: socket.socket) -> None:
    """All of the request: a close with bytes left unread would reset the connection, a
    different error from the one a test expects."""
    received = b""
    while not received.endswith(BODY):
        chunk = conn.recv(65536)
        if not chunk:
            return
        received += chunk


@contextmanager
def raw_server(answer: Answer) -> Iterator[str]:
    """A loopback server that reads one request and then does ``answer`` with the socket."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(10)
    port = listener.getsockname()[1]

    def serve() -> None:
        with listener, listener.accept()[0] as conn:
            read_request(conn)
            answer(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/hooks"
    finally:
        thread.join(timeout=10)


def send(url: str, *, timeout: float = 5.0) -> httpx.Response:
    async def attempt() -> httpx.Response:
        async with make_client(allow_loopback=True) as client:
            response = await client.post(url, content=BODY, timeout=timeout)
            await response.aread()
            return response

    return asyncio.run(attempt())


def test_an_answer_comes_back_with_status_headers_and_body():
    receiver = Receiver(behaviour=lambda _r, _i: (418, {"Retry-After": "7"}, 0.0)).start()

    async def attempt() -> list[object]:
        async with make_client(allow_loopback=True) as client:
            return [await post(client, receiver.url, b"{}", {}) for _ in range(3)]

    try:
        results = asyncio.run(attempt())
    finally:
        receiver.stop()
    assert [result.status_code for result in results] == [418, 418, 418]  # type: ignore[attr-defined]
    assert all(result.retry_after == "7" for result in results)  # type: ignore[attr-defined]
    assert len(receiver.received) == 3


def test_a_server_that_closes_without_answering_is_an_httpx_protocol_error():
    with (
        raw_server(lambda conn: None) as url,
        pytest.raises(httpx.RemoteProtocolError, match="disconnected"),
    ):
        send(url)


def test_a_body_cut_short_is_an_httpx_error_while_reading():
    def cut(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")

    with (
        raw_server(cut) as url,
        pytest.raises(httpx.RemoteProtocolError, match="complete message body"),
    ):
        send(url)


def test_a_silent_server_is_an_httpx_read_timeout():
    release = threading.Event()
    with raw_server(lambda conn: release.wait(10)) as url:
        try:
            with pytest.raises(httpx.ReadTimeout):
                send(url, timeout=0.3)
        finally:
            release.set()


def test_a_closed_port_is_an_httpx_connect_error():
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    with pytest.raises(httpx.ConnectError):
        send(f"http://127.0.0.1:{port}/hooks")
