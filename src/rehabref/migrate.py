"""Running Alembic migrations from the package (``rehabref migrate``)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.script.revision import ResolutionError
from sqlalchemy import create_engine
from sqlalchemy.exc import OperationalError

from rehabref.db import sync_url

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


def alembic_config(database_url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", sync_url(database_url).replace("%", "%%"))
    return config


def upgrade(database_url: str, revision: str = "heads") -> None:
    command.upgrade(alembic_config(database_url), revision)


def missing_revisions(database_url: str) -> list[str] | None:
    """Migrations of this code that the database has not had, oldest first; None when the
    database cannot be reached (``serve`` then starts anyway and ``/readyz`` says so).

    Revisions in the database that this code does not know (a newer release already migrated
    it) count as nothing missing: older code keeps running during a rolling deploy.
    """
    script = ScriptDirectory.from_config(alembic_config(database_url))
    engine = create_engine(sync_url(database_url))
    try:
        with engine.connect() as conn:
            current = MigrationContext.configure(conn).get_current_heads()
    except OperationalError:
        return None
    finally:
        engine.dispose()
    applied: set[str] = set()
    for revision in current:
        try:
            applied.update(r.revision for r in script.iterate_revisions(revision, "base"))
        except ResolutionError:  # a revision newer than this code
            return []
    every = reversed(list(script.walk_revisions()))
    return [r.revision for r in every if r.revision not in applied]
