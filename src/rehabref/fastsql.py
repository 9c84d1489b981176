"""Hot-path statement execution: Core statements compiled once, run on a raw connection.

SQLAlchemy's execution layer costs more CPU per statement than asyncpg itself (measured
here); on the request hot paths that dominated the profile. On a ``RawConnection`` (a pooled
asyncpg connection in autocommit, from ``Database.fast_read``) these helpers compile each Core
statement once for PostgreSQL and execute it on asyncpg directly. On a SQLAlchemy connection
(``Database.read``/``write``, and SQLite always) the same calls go through SQLAlchemy as usual.
Which one runs is decided by the connection passed in, nothing else. Results come back as
``result_rows.Record`` (attribute access) either way.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeAlias, cast

import asyncpg
import msgspec
from sqlalchemy import JSON
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler

from rehabref.result_rows import Record, record_type


class RawConnection:
    """A pooled asyncpg connection in autocommit mode, for this module's statements only.

    ``Database.fast_read`` and ``Database.autocommit`` hand these out on PostgreSQL: checking
    a connection out of SQLAlchemy's pool cost about a tenth of a retrieve's CPU. It has no
    ``execute``: code that needs SQLAlchemy opens ``Database.read`` or ``Database.write``.
    """

    __slots__ = ("dialect", "driver")

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

    def compiled(self, dialect: Dialect, keys: Sequence[str] | None = None) -> _Compiled:
        cache_key = tuple(keys) if keys is not None else None
        found = self._compiled.get(cache_key)
        if found is None:
            found = self._compiled[cache_key] = _Compiled(self.statement, dialect, keys)
        return found


def _integrity(statement: Statement, exc: asyncpg.PostgresError) -> IntegrityError:
    return IntegrityError(str(statement.statement), None, exc)


async def fetch_one(
    conn: Connection, statement: Statement, params: Mapping[str, Any]
) -> Record | None:
    if not isinstance(conn, RawConnection):
        row = (await conn.execute(statement.statement, dict(params))).first()
        return None if row is None else record_type(row._fields)(row._mapping)
    compiled = statement.compiled(conn.dialect)
    found = await conn.driver.fetchrow(compiled.sql, *compiled.arguments(params))
    return None if found is None else compiled.record(found)


async def fetch_all(
    conn: Connection, statement: Statement, params: Mapping[str, Any]
) -> list[Record]:
    if not isinstance(conn, RawConnection):
        result = await conn.execute(statement.statement, dict(params))
        make = record_type(result.keys())
        return [make(row._mapping) for row in result]
    compiled = statement.compiled(conn.dialect)
    return [
        compiled.record(row)
        for row in await conn.driver.fetch(compiled.sql, *compiled.arguments(params))
    ]


async def execute(conn: Connection, statement: Statement, params: Mapping[str, Any]) -> None:
    if not isinstance(conn, RawConnection):
        await conn.execute(statement.statement, dict(params))
        return
    compiled = statement.compiled(conn.dialect, sorted(params))
    try:
        await conn.driver.execute(compiled.sql, *compiled.arguments(params))
    except asyncpg.IntegrityConstraintViolationError as exc:
        raise _integrity(statement, exc) from exc


async def execute_many(
    conn: Connection, statement: Statement, rows: Iterable[Mapping[str, Any]]
) -> None:
    """Insert many rows of the same keys (one round trip on a raw connection)."""
    rows = list(rows)
    if not rows:
        return
    if not isinstance(conn, RawConnection):
        await conn.execute(statement.statement, [dict(row) for row in rows])
        return
    compiled = statement.compiled(conn.dialect, sorted(rows[0]))
    try:
        await conn.driver.executemany(compiled.sql, [compiled.arguments(row) for row in rows])
    except asyncpg.IntegrityConstraintViolationError as exc:
        raise _integrity(statement, exc) from exc
