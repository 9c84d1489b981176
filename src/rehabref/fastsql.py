"""Hot-path statement execution: Core statements compiled once, run on the raw driver.

SQLAlchemy's execution layer costs about 70 µs of CPU per statement on top of asyncpg's own
~50 µs (measured here); on the request hot paths that dominated the profile. On PostgreSQL
these helpers compile each Core statement once and execute it directly on the asyncpg
connection behind the SQLAlchemy pool, inside the same transaction. Other dialects (SQLite)
go through SQLAlchemy as usual. Results come back as ``result_rows.Record`` (attribute access)
either way.
"""

from __future__ import annotations

import operator
import re
import weakref
from collections.abc import Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, TypeAlias, cast

import asyncpg
import msgspec
from sqlalchemy import JSON
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.dml import Insert
from sqlalchemy.sql.util import find_tables

from rehabref.result_rows import Record, record_type


class RawConnection:
    """A pooled asyncpg connection in autocommit mode, for this module's statements only.

    ``Database.fast_read`` and ``Database.autocommit`` hand these out on PostgreSQL: checking
    a connection out of SQLAlchemy's pool cost about a tenth of a retrieve's CPU. It has no
    ``execute``: code that needs SQLAlchemy opens ``Database.read`` or ``Database.write``.
    """

    __slots__ = ("__weakref__", "dialect", "driver")

    def __init__(self, driver: asyncpg.Connection, dialect: Dialect) -> None:
        self.driver = driver
        self.dialect = dialect


# What this module's functions run on: a SQLAlchemy connection or a raw pooled one.
Connection: TypeAlias = AsyncConnection | RawConnection


class _Compiled:
    __slots__ = (
        "_columns",
        "_make_record",
        "_pick",
        "constants",
        "json_columns",
        "json_params",
        "names",
        "sql",
    )

    def __init__(self, statement: ClauseElement, dialect: Dialect, keys: Sequence[str] | None):
        compiled = cast(
            SQLCompiler,
            statement.compile(dialect=dialect, column_keys=list(keys) if keys else None),
        )
        self.sql: str = compiled.string
        self.names: tuple[str, ...] = tuple(compiled.positiontup or ())
        self._pick = operator.itemgetter(*self.names) if len(self.names) > 1 else None
        self.json_params = frozenset(
            name for name in self.names if isinstance(compiled.binds[name].type, JSON)
        )
        # Values fixed in the statement itself (e.g. ``literal(1)``) rather than passed in.
        self.constants = {
            name: compiled.binds[name].effective_value
            for name in self.names
            if compiled.binds[name].value is not None
        }
        columns = getattr(statement, "selected_columns", None) or []
        self.json_columns = tuple(c.key for c in columns if isinstance(c.type, JSON))
        # The rows' column names, from the first row (labels as the driver reports them).
        self._columns: tuple[str, ...] = ()
        self._make_record: type[Record] | None = None

    def arguments(self, params: Mapping[str, Any]) -> list[Any]:
        if self.constants:
            params = {**self.constants, **params}
        if self.json_params:
            params = {
                **params,
                **{
                    name: msgspec.json.encode(params[name]).decode()
                    for name in self.json_params
                    if params[name] is not None
                },
            }
        # One C-level lookup of every name instead of a Python loop over them.
        pick = self._pick
        return list(pick(params)) if pick is not None else [params[n] for n in self.names]

    def record(self, row: asyncpg.Record) -> Record:
        make = self._make_record
        if make is None:
            self._columns = tuple(row.keys())
            make = self._make_record = record_type(self._columns)
        record = make(zip(self._columns, row, strict=True))
        for key in self.json_columns:
            value = record.get(key)
            if isinstance(value, str):
                record[key] = msgspec.json.decode(value)
        return record


class Statement:
    """A Core statement with its compiled PostgreSQL form cached per set of insert keys."""

    def __init__(self, statement: Any) -> None:
        self.statement = statement
        self._compiled: dict[tuple[str, ...] | None, _Compiled] = {}
        self.is_insert = isinstance(statement, Insert)
        self.tables = frozenset(table.name for table in find_tables(statement, include_crud=True))

    def compiled(self, dialect: Dialect, keys: Sequence[str] | None = None) -> _Compiled:
        cache_key = tuple(keys) if keys is not None else None
        found = self._compiled.get(cache_key)
        if found is None:
            found = self._compiled[cache_key] = _Compiled(self.statement, dialect, keys)
        return found


# AsyncConnection -> SQLAlchemy's asyncpg adapter; asking SQLAlchemy for it costs a greenlet
# switch, so it is looked up once per checked-out connection.
_adapters: weakref.WeakKeyDictionary[AsyncConnection, Any] = weakref.WeakKeyDictionary()


async def _driver(conn: Connection) -> asyncpg.Connection | None:
    """The asyncpg connection inside an open transaction, or None off PostgreSQL."""
    if isinstance(conn, RawConnection):
        return conn.driver
    if conn.dialect.driver != "asyncpg":
        return None
    adapter: Any = _adapters.get(conn)
    if adapter is None:
        fairy = await conn.get_raw_connection()
        adapter = _adapters[conn] = fairy.dbapi_connection
    # SQLAlchemy's asyncpg adapter begins lazily on its first statement; we are that first
    # statement here, so begin the same way (a no-op for autocommit read connections).
    if adapter._transaction is None:
        await adapter._start_transaction()
    driver: asyncpg.Connection = adapter._connection
    return driver


def _integrity(statement: Statement, exc: asyncpg.PostgresError) -> IntegrityError:
    return IntegrityError(str(statement.statement), None, exc)


async def fetch_one(
    conn: Connection, statement: Statement, params: Mapping[str, Any]
) -> Record | None:
    driver = await _driver(conn)
    if driver is None:
        assert isinstance(conn, AsyncConnection)
        row = (await conn.execute(statement.statement, dict(params))).first()
        return None if row is None else record_type(row._fields)(row._mapping)
    await _flush_before(conn, driver, statement)
    compiled = statement.compiled(conn.dialect)
    found = await driver.fetchrow(compiled.sql, *compiled.arguments(params))
    return None if found is None else compiled.record(found)


async def fetch_all(
    conn: Connection, statement: Statement, params: Mapping[str, Any]
) -> list[Record]:
    driver = await _driver(conn)
    if driver is None:
        assert isinstance(conn, AsyncConnection)
        result = await conn.execute(statement.statement, dict(params))
        make = record_type(result.keys())
        return [make(row._mapping) for row in result]
    await _flush_before(conn, driver, statement)
    compiled = statement.compiled(conn.dialect)
    return [
        compiled.record(row)
        for row in await driver.fetch(compiled.sql, *compiled.arguments(params))
    ]


async def execute(conn: Connection, statement: Statement, params: Mapping[str, Any]) -> None:
    driver = await _driver(conn)
    if driver is None:
        assert isinstance(conn, AsyncConnection)
        await conn.execute(statement.statement, dict(params))
        return
    compiled = statement.compiled(conn.dialect, sorted(params))
    batch = _batches.get(conn)
    if batch is not None and statement.is_insert:
        batch.add(statement, compiled.sql, compiled.arguments(params))
        return
    _refuse_in_single_statement(batch, statement)
    await _flush_before(conn, driver, statement)
    try:
        await driver.execute(compiled.sql, *compiled.arguments(params))
    except asyncpg.IntegrityConstraintViolationError as exc:
        raise _integrity(statement, exc) from exc


async def execute_many(
    conn: Connection, statement: Statement, rows: Iterable[Mapping[str, Any]]
) -> None:
    """Insert many rows of the same keys (one round trip on PostgreSQL)."""
    rows = list(rows)
    if not rows:
        return
    driver = await _driver(conn)
    if driver is None:
        assert isinstance(conn, AsyncConnection)
        await conn.execute(statement.statement, [dict(row) for row in rows])
        return
    compiled = statement.compiled(conn.dialect, sorted(rows[0]))
    batch = _batches.get(conn)
    if batch is not None and statement.is_insert:
        for row in rows:
            batch.add(statement, compiled.sql, compiled.arguments(row))
        return
    _refuse_in_single_statement(batch, statement)
    await _flush_before(conn, driver, statement)
    try:
        await driver.executemany(compiled.sql, [compiled.arguments(row) for row in rows])
    except asyncpg.IntegrityConstraintViolationError as exc:
        raise _integrity(statement, exc) from exc


# ---------------------------------------------------------------------------- insert batches
_PLACEHOLDER = re.compile(r"\$(\d+)")


class _Batch:
    """INSERTs queued on one connection, sent as one statement of data-modifying CTEs."""

    def __init__(self, *, single_statement: bool) -> None:
        self.single_statement = single_statement
        self.parts: list[tuple[str, list[Any]]] = []
        self.tables: set[str] = set()
        self.statements: list[Statement] = []

    def add(self, statement: Statement, sql: str, arguments: list[Any]) -> None:
        self.parts.append((sql, arguments))
        self.tables |= statement.tables
        self.statements.append(statement)

    def take(self) -> tuple[str, list[Any]] | None:
        """One SQL text and its arguments for everything queued; empties the batch."""
        parts, self.parts = self.parts, []
        self.tables = set()
        self.statements = []
        if not parts:
            return None
        if len(parts) == 1:
            return parts[0]
        arguments: list[Any] = []
        for _, values in parts:
            arguments.extend(values)
        shape = tuple((sql, len(values)) for sql, values in parts)
        combined = _combined.get(shape)
        if combined is None:
            if len(_combined) >= 1000:
                _combined.clear()
            combined = _combined[shape] = _combine(shape)
        return combined, arguments


# (statement text, argument count) of each queued part -> the combined text. A request path
# queues the same shapes every time, and renumbering placeholders was a twentieth of a create.
_combined: dict[tuple[tuple[str, int], ...], str] = {}


def _combine(shape: tuple[tuple[str, int], ...]) -> str:
    texts: list[str] = []
    offset = 0
    for sql, count in shape:
        texts.append(
            _PLACEHOLDER.sub(lambda m, o=offset: f"${int(m.group(1)) + o}", sql)  # type: ignore[misc]
        )
        offset += count
    ctes = ", ".join(f"b{n} AS ({text})" for n, text in enumerate(texts[:-1]))
    return f"WITH {ctes} {texts[-1]}"


_batches: weakref.WeakKeyDictionary[Connection, _Batch] = weakref.WeakKeyDictionary()


def batched_inserts(conn: Connection, *, single_statement: bool = False) -> BatchedInserts:
    """Inside the block, INSERTs made through this module reach PostgreSQL as one statement.

    A create writes five tables; sending them together saves four round trips. The batch is
    sent before any statement of this module that reads or changes a table it holds, and at
    the end of the block. Constraint violations surface then, as ``IntegrityError``.
    Code inside the block must use this module (not ``conn.execute``) for statements that
    depend on the queued rows. Off PostgreSQL statements run at once, as usual.

    ``single_statement``: ``conn`` is an autocommit connection (``Database.autocommit``) and
    the block's writes are exactly the one statement sent at its end, atomic on its own, so
    no BEGIN and COMMIT round trips are needed. Reads of other tables may run in the block;
    a write that cannot be queued, or a read that would need the queue sent first, raises
    ``SingleStatementViolation`` (a programming error: such work needs ``Database.write``).
    """
    return BatchedInserts(conn, single_statement=single_statement)


class BatchedInserts:
    """The block of ``batched_inserts`` (a class: a generator-based context manager cost about
    five times as much to enter and leave, on every create)."""

    __slots__ = ("_conn", "_owner", "_single_statement")

    def __init__(self, conn: Connection, *, single_statement: bool) -> None:
        self._conn = conn
        self._single_statement = single_statement
        self._owner = False

    async def __aenter__(self) -> None:
        conn = self._conn
        # An inner block on a connection already batching joins the outer one.
        if conn.dialect.driver == "asyncpg" and conn not in _batches:
            _batches[conn] = _Batch(single_statement=self._single_statement)
            self._owner = True

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if not self._owner:
            return
        self._owner = False
        try:
            if exc is None:
                await _send(self._conn)
        finally:
            _batches.pop(self._conn, None)


def batching(conn: Connection) -> bool:
    """Whether INSERTs on ``conn`` are being queued (PostgreSQL, inside ``batched_inserts``)."""
    return conn in _batches


async def flush(conn: Connection) -> None:
    """Send the queued INSERTs of this connection now (a no-op when none are queued)."""
    batch = _batches.get(conn)
    if batch is not None and batch.single_statement and batch.parts:
        raise SingleStatementViolation("flush() inside a single-statement batch")
    await _send(conn)


async def _send(conn: Connection) -> None:
    batch = _batches.get(conn)
    if batch is None or not batch.parts:
        return
    driver = await _driver(conn)
    assert driver is not None
    statements = list(batch.statements)
    combined = batch.take()
    if combined is None:
        return
    sql, arguments = combined
    try:
        await driver.execute(sql, *arguments)
    except asyncpg.IntegrityConstraintViolationError as exc:
        raise _integrity(statements[0], exc) from exc


async def _flush_before(conn: Connection, driver: Any, statement: Statement) -> None:
    batch = _batches.get(conn)
    if batch is not None and batch.parts and batch.tables & statement.tables:
        if batch.single_statement:
            raise SingleStatementViolation(
                f"{statement.statement} reads rows still queued in a single-statement batch"
            )
        await flush(conn)


class SingleStatementViolation(RuntimeError):
    """Work inside ``batched_inserts(single_statement=True)`` that one statement cannot do."""


def _refuse_in_single_statement(batch: _Batch | None, statement: Statement) -> None:
    if batch is not None and batch.single_statement:
        raise SingleStatementViolation(f"{statement.statement} is not an INSERT")
