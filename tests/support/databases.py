"""Fresh, migrated databases for a test session: a SQLite file or a PostgreSQL database."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from sqlalchemy.engine import make_url

from rehabref.migrate import upgrade


def selected_backend() -> str:
    return os.environ.get("REHABREF_TEST_DATABASE", "sqlite")


def postgres_admin_url() -> str:
    return os.environ.get(
        "REHABREF_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
    )


@contextmanager
def fresh_database(tmp_dir: Path, backend: str | None = None) -> Iterator[str]:
    """Yield the URL of an empty database with every migration applied; drop it afterwards."""
    backend = backend or selected_backend()
    if backend == "sqlite":
        path = tmp_dir / f"rehabref-{secrets.token_hex(4)}.db"
        url = f"sqlite:///{path}"
        upgrade(url)
        yield url
        return
    admin = make_url(postgres_admin_url())
    name = f"rehabref_test_{os.getpid()}_{secrets.token_hex(4)}"
    admin_dsn = admin.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = admin.set(drivername="postgresql", database=name).render_as_string(hide_password=False)
    try:
        upgrade(url)
        yield url
    finally:
        with psycopg.connect(admin_dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
