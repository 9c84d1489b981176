"""Database engines and the transaction boundary.

Services receive an ``AsyncConnection`` and never commit; the caller (an endpoint, a worker
job or a CLI command) opens ``Database.write()`` and the transaction commits when the block
exits without an exception. On SQLite, writers are serialised in-process by a lock and
begin with ``BEGIN IMMEDIATE`` so concurrent writers wait instead of failing on lock upgrade.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from types import TracebackType
from typing import Any, cast

import asyncpg
from sqlalchemy import Table, event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Dialect, make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.orm import DeclarativeBase

from rehabref.fastsql import Connection, RawConnection
from rehabref.raw_pool import Checkout, RawPool

HOT_PATH_SERVER_SETTINGS = {"plan_cache_mode": "force_generic_plan"}


class Base(DeclarativeBase):
    pass


def table(model: type[Base]) -> Table:
    """The Core table of a model, typed for Core statements on hot paths."""
    return cast(Table, model.__table__)


async def insert_ignoring_duplicates(
    conn: AsyncConnection, target: Table, row: dict[str, Any]
) -> bool:
    """Insert ``row`` unless a unique key it has is taken; True when it was inserted.

    Concurrent callers with the same key never fail: exactly one of them inserts.
    """
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    result = await conn.execute(dialect.insert(target).on_conflict_do_nothing(), row)
    return bool(result.rowcount)


def async_url(url: str) -> str:
    """Map an operator URL (``postgresql://``, ``sqlite:///``) to its async driver."""
    parsed = make_url(url)
    if parsed.drivername in {"postgresql", "postgres", "postgresql+psycopg", "postgresql+asyncpg"}:
        return parsed.set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)
    if parsed.drivername in {"sqlite", "sqlite+aiosqlite", "sqlite+pysqlite"}:
        return parsed.set(drivername="sqlite+aiosqlite").render_as_string(hide_password=False)
    raise ValueError(f"unsupported database URL scheme: {parsed.drivername}")


def sync_url(url: str) -> str:
    """The same database through a synchronous driver (migrations)."""
    parsed = make_url(url)
    if parsed.drivername.startswith("postgres"):
        return parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
    return parsed.set(drivername="sqlite+pysqlite").render_as_string(hide_password=False)


def _sqlite_engine(url: str, begin_statement: str) -> AsyncEngine:
    engine = create_async_engine(url, pool_size=5, max_overflow=5)

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take over transaction control from the driver so BEGIN is ours to choose.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=10000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql(begin_statement)

    return engine


class Database:
    def __init__(
        self, url: str, *, pool_size: int = 20, hot_path_connections: int | None = None
    ) -> None:
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        target = async_url(url)
        if self.is_sqlite:
            self._writer = _sqlite_engine(target, "BEGIN IMMEDIATE")
            self._reader = _sqlite_engine(target, "BEGIN")
        else:
            # No overflow: under load, requests queue for a pooled connection instead of
            # opening and closing extra ones (connection churn cost more than the wait).
            self._writer = create_async_engine(
                target, pool_size=pool_size, max_overflow=0, pool_timeout=30
            )
            # Reads are single statements: autocommit saves a BEGIN/COMMIT round trip each.
            self._reader = self._writer.execution_options(isolation_level="AUTOCOMMIT")
        self._write_lock = asyncio.Lock() if self.is_sqlite else None
        # PostgreSQL: raw asyncpg connections for the hot paths (``fast_read``, ``autocommit``).
        self._raw_pool: RawPool | None = None
        self._raw_pool_size = hot_path_connections or max(2, pool_size // 2)

    @property
    def engine(self) -> AsyncEngine:
        return self._writer

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncConnection]:
        """One transaction; commits on normal exit, rolls back on an exception."""
        if self._write_lock is not None:
            async with self._write_lock, self._writer.begin() as conn:
                yield conn
        else:
            async with self._writer.begin() as conn:
                yield conn

    def autocommit(self) -> AbstractAsyncContextManager[Connection]:
        """For a write that is one statement (the referral create's, ``workflows/create_store``).

        On PostgreSQL a raw autocommit connection: the statement commits on its own, without
        BEGIN and COMMIT round trips. On SQLite the usual write transaction.
        """
        return self.write() if self.is_sqlite else self._raw()

    def fast_read(self) -> AbstractAsyncContextManager[Connection]:
        """For reads made only through ``fastsql``: a raw pooled connection on PostgreSQL."""
        return self.read() if self.is_sqlite else self._raw()

    def _raw(self) -> RawCheckout:
        if self._raw_pool is None:
            dialect = self._writer.sync_engine.dialect
            _, options = dialect.create_connect_args(self._writer.sync_engine.url)

            # The hot-path statements are keyed inserts and index lookups: one generic plan
            # each, instead of PostgreSQL re-planning them per execution (custom plans), cut
            # its CPU per create by about a sixth (docs/performance.md).
            settings = {**options.get("server_settings", {}), **HOT_PATH_SERVER_SETTINGS}

            async def connect() -> asyncpg.Connection:
                return await asyncpg.connect(**{**options, "server_settings": settings})

            self._raw_pool = RawPool(connect, size=self._raw_pool_size)
        return RawCheckout(self._raw_pool.connection(), self._writer.dialect)

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncConnection]:
        async with self._reader.connect() as conn:
            yield conn

    async def ping(self) -> bool:
        from sqlalchemy import text

        try:
            async with self.read() as conn:
                await conn.execute(text("SELECT 1"))
        except Exception:
            return False
        return True

    async def dispose(self) -> None:
        if self._raw_pool is not None:
            await self._raw_pool.close()
            self._raw_pool = None
        await self._writer.dispose()
        if self._reader is not self._writer:
            await self._reader.dispose()


class RawCheckout:
    """A pooled raw connection for one block, as a ``RawConnection`` (a class, not a
    generator-based context manager: see ``raw_pool.Checkout``)."""

    __slots__ = ("_checkout", "_dialect")

    def __init__(self, checkout: Checkout, dialect: Dialect) -> None:
        self._checkout = checkout
        self._dialect = dialect

    async def __aenter__(self) -> RawConnection:
        return RawConnection(await self._checkout.__aenter__(), self._dialect)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self._checkout.__aexit__(exc_type, exc, traceback)
