"""Which partner-owned tables a SQL statement touches without the tenant conditions.

A table is partner-owned when it has non-nullable ``partner_id`` and ``environment`` columns
(a shared registry would leave ``partner_id`` nullable). A statement is scoped for such a
table when it compares both columns with a bound value (``partner_id = ?`` and
``environment = ?``) somewhere in it: its WHERE clause, a join or a subquery. Comparing a
tenant column with another column (a join on partner ids) does not count.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Column, Table, event
from sqlalchemy.engine import Engine
from sqlalchemy.sql import operators, visitors
from sqlalchemy.sql.dml import Insert
from sqlalchemy.sql.elements import BinaryExpression, BindParameter, ClauseElement
from sqlalchemy.sql.util import find_tables

TENANT_COLUMNS = frozenset({"partner_id", "environment"})


def partner_owned(table: Table) -> bool:
    columns = table.c
    return all(name in columns and not columns[name].nullable for name in TENANT_COLUMNS)


def unscoped_tables(statement: ClauseElement) -> set[str]:
    """Names of the partner-owned tables ``statement`` reads or changes unscoped."""
    if isinstance(statement, Insert):
        return set()  # new rows: their tenant columns are values, not conditions
    owned = {
        table
        for table in find_tables(statement, include_crud=True, include_joins=True)
        if isinstance(table, Table) and partner_owned(table)
    }
    conditioned: dict[Table, set[str]] = defaultdict(set)
    for element in visitors.iterate(statement):
        if not isinstance(element, BinaryExpression) or element.operator is not operators.eq:
            continue
        for column, other in ((element.left, element.right), (element.right, element.left)):
            if (
                isinstance(column, Column)
                and column.name in TENANT_COLUMNS
                and column.table in owned
                and isinstance(other, BindParameter)
            ):
                conditioned[column.table].add(column.name)
    return {table.name for table in owned if conditioned[table] != TENANT_COLUMNS}


@contextmanager
def recorded_statements() -> Iterator[list[ClauseElement]]:
    """Every statement executed through SQLAlchemy (any engine) inside the block."""
    seen: list[ClauseElement] = []

    def record(_conn: Any, clause: ClauseElement, *_args: Any) -> None:
        seen.append(clause)

    event.listen(Engine, "before_execute", record)
    try:
        yield seen
    finally:
        event.remove(Engine, "before_execute", record)
