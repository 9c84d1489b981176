"""A small LIFO pool of asyncpg connections for the hot paths (``Database.fast_read``,
``Database.autocommit``).

asyncpg's own pool wraps each connection in a proxy, shields every release in a new task and
resets the session on return; the hot paths use a connection in autocommit for one or two
statements, so none of that is needed: a checkout is a list pop and a return a list append.
A connection that comes back closed or inside a transaction, or whose user was cancelled or
lost the connection, is terminated instead and its slot goes to the next waiter.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from types import TracebackType

import asyncpg

# Failures after which a connection may be mid-protocol or gone: never reused.
_UNSAFE = (asyncio.CancelledError, asyncio.TimeoutError, OSError, asyncpg.InterfaceError)


class PoolClosed(RuntimeError):
    pass


class RawPool:
    def __init__(self, connect: Callable[[], Awaitable[asyncpg.Connection]], *, size: int) -> None:
        if size < 1:
            raise ValueError("a pool needs at least one connection")
        self._connect = connect
        self._size = size
        self._idle: list[asyncpg.Connection] = []
        self._opened = 0
        # Each waiter gets a connection, or None: "a slot is free, open one yourself".
        self._waiters: deque[asyncio.Future[asyncpg.Connection | None]] = deque()
        self._closed = False

    @property
    def opened(self) -> int:
        return self._opened

    def connection(self) -> Checkout:
        """``async with pool.connection() as conn``: a connection for the block's duration."""
        return Checkout(self)

    async def _acquire(self) -> asyncpg.Connection:
        while True:
            if self._closed:
                raise PoolClosed("the connection pool is closed")
            while self._idle:
                conn = self._idle.pop()
                if not conn.is_closed():
                    return conn
                self._opened -= 1
            if self._opened < self._size:
                self._opened += 1
                try:
                    return await self._connect()
                except BaseException:
                    self._opened -= 1
                    self._hand_over(None)
                    raise
            waiter: asyncio.Future[asyncpg.Connection | None] = (
                asyncio.get_running_loop().create_future()
            )
            self._waiters.append(waiter)
            try:
                conn = await waiter
            except asyncio.CancelledError:
                # Cancelled after being handed something: pass it on, or it is lost.
                if waiter.done() and not waiter.cancelled():
                    handed = waiter.result()
                    if handed is None:
                        self._hand_over(None)
                    else:
                        self._release(handed)
                raise
            if conn is not None:
                return conn

    def _release(self, conn: asyncpg.Connection) -> None:
        if self._closed or conn.is_closed() or conn.is_in_transaction():
            self._discard(conn)
            return
        if not self._hand_over(conn):
            self._idle.append(conn)

    def _discard(self, conn: asyncpg.Connection) -> None:
        conn.terminate()
        self._opened -= 1
        self._hand_over(None)

    def _hand_over(self, item: asyncpg.Connection | None) -> bool:
        """Give ``item`` to the longest waiting caller still waiting; False if none is."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(item)
                return True
        return False

    async def close(self) -> None:
        """Close idle connections now; connections in use are closed when they come back."""
        self._closed = True
        idle, self._idle = self._idle, []
        self._opened -= len(idle)
        for conn in idle:
            try:
                await conn.close(timeout=5)
            except (TimeoutError, OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
                conn.terminate()
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_exception(PoolClosed("the connection pool is closed"))
        self._waiters.clear()


class Checkout:
    """One use of a pooled connection. A class rather than ``@asynccontextmanager``: entering
    and leaving a generator-based one cost about five times as much, on every hot request.

    Leaving with an error after which the connection may be mid-protocol terminates it;
    leaving otherwise returns it to the pool.
    """

    __slots__ = ("_conn", "_pool")

    def __init__(self, pool: RawPool) -> None:
        self._pool = pool
        self._conn: asyncpg.Connection | None = None

    async def __aenter__(self) -> asyncpg.Connection:
        self._conn = await self._pool._acquire()
        return self._conn

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if isinstance(exc, _UNSAFE):
            self._pool._discard(conn)
        else:
            self._pool._release(conn)
