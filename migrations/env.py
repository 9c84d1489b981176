"""Alembic environment: runs migrations with the synchronous driver of the configured URL."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, pool

from rehabref.tables import metadata

config = context.config


def run() -> None:
    url = config.get_main_option("sqlalchemy.url")
    assert url, "sqlalchemy.url is set by rehabref.migrate"
    if context.is_offline_mode():
        context.configure(url=url, target_metadata=metadata, literal_binds=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = create_engine(url, poolclass=pool.NullPool)
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=metadata,
            render_as_batch=connection.dialect.name == "sqlite",
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


run()
