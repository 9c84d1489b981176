"""Direct row edits for tests (time travel, payments), typed through the app's own tables.

Plain ``text()`` binds would hand datetimes to the driver untyped; SQLite then stores them in
another text format than the app's and comparisons go wrong. Going through the table keeps the
stored format identical to what the service writes.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import update
from sqlalchemy.engine import Engine

from rehabref.tables import metadata


def update_rows(engine: Engine, table_name: str, where: dict[str, Any], **values: Any) -> int:
    table = metadata.tables[table_name]
    statement = update(table).where(*(table.c[name] == value for name, value in where.items()))
    with engine.begin() as conn:
        return int(conn.execute(statement.values(**values)).rowcount)
