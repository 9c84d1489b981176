"""What a copy of the database reveals, for the at-rest tests (docs/security.md)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from sqlalchemy import JSON, String, Text, cast, func, make_url, select
from sqlalchemy.engine import Engine

from rehabref.tables import metadata


def database_copy(database_url: str) -> bytes:
    """The SQLite file and its write-ahead log as bytes, or a ``pg_dump`` of the PostgreSQL
    database. The files are read by another process: closing a descriptor of the database
    file in this one would drop the SQLite locks this process's connections hold (POSIX locks
    are per process), and a live server's writes would then corrupt the database."""
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite":
        path = Path(str(url.database))
        parts = [str(p) for p in (path, path.with_name(path.name + "-wal")) if p.exists()]
        return subprocess.run(["cat", *parts], check=True, capture_output=True, timeout=60).stdout
    dsn = url.set(drivername="postgresql").render_as_string(hide_password=False)
    return subprocess.run(
        ["pg_dump", "--data-only", "--dbname", dsn], check=True, capture_output=True, timeout=60
    ).stdout


def columns_holding(sql: Engine, secret: str) -> list[str]:
    """Where ``secret`` is stored in plain text, as ``table.column``: for a failure message."""
    found = []
    with sql.connect() as conn:
        for table in metadata.sorted_tables:
            for column in table.columns:
                if not isinstance(column.type, String | Text | JSON):
                    continue
                hits = conn.execute(
                    select(func.count())
                    .select_from(table)
                    .where(cast(column, Text).contains(secret, autoescape=True))
                ).scalar_one()
                if hits:
                    found.append(f"{table.name}.{column.name}")
    return found
