"""Sealing the rows a release stored in plain text, for the migrations that start sealing a
column (0025 and later).

Threat: a column that starts being sealed still holds every earlier row in plain text until
they are sealed too. A migration names its columns and their purposes (written out in the
migration: it must not change when the application's code does) and calls
``seal_plain_values``. Rows are read ``BATCH`` at a time by key; a value this ring already
opens is left alone, so an interrupted migration simply runs again. The ring is the one the
application reads (the key file beside the database, or ``REHABREF_SECRET_KEY``), loaded
only when a row needs sealing; with no key at all the migration stops rather than seal under
a key made up on the spot, which would lock the rows away from the application.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from rehabref.config import load_settings
from rehabref.crypto import SEALED_PREFIX, KeyRing, SealedValueError, open_sealed, seal
from rehabref.instance_secret import load_key_ring

BATCH = 500


class MigrationRing:
    """The application's key ring for one migration run, read on first use."""

    def __init__(self, bind: sa.engine.Connection, revision: str) -> None:
        self._bind = bind
        self._revision = revision
        self._ring: KeyRing | None = None

    def get(self) -> KeyRing:
        if self._ring is None:
            self._ring = self._load()
        return self._ring

    def _load(self) -> KeyRing:
        # The settings of the database being migrated (its default key file sits beside it).
        settings = load_settings(
            {**os.environ, "REHABREF_DATABASE_URL": self._bind.engine.url.render_as_string(False)}
        )
        key_file = Path(settings.secret_key_file)
        if not settings.secret_key and not key_file.exists():
            raise RuntimeError(
                f"Migration {self._revision} seals patient data with the instance key, but no "
                f"key was found (REHABREF_SECRET_KEY is unset and {key_file} does not exist). "
                "Run it where the application's key is, or set REHABREF_SECRET_KEY / "
                "REHABREF_SECRET_KEY_FILE."
            )
        return load_key_ring(settings.secret_key, key_file)


# What a sealed value looks like: the prefix, a key id, the base64url body.
_ENVELOPE = re.compile(r"s1\.([A-Za-z0-9_-]{1,16})\.[A-Za-z0-9_-]+")


def is_sealed_under(ring: KeyRing, purpose: str, value: str) -> bool:
    """A value this ring opens (a plain value may start with ``s1.`` too, e.g. an e-mail).
    A sealed value whose key is not in the ring stops the migration: sealing it again would
    bury it under a second layer that readers would open into ciphertext."""
    if not value.startswith(SEALED_PREFIX):
        return False
    try:
        open_sealed(ring, purpose, value)
    except SealedValueError:
        envelope = _ENVELOPE.fullmatch(value)
        if envelope and envelope.group(1) not in {key_id for key_id, _ in ring.keys}:
            raise RuntimeError(
                f"A value is sealed under key {envelope.group(1)!r}, which is not in the key "
                "ring: put that key back in the ring (REHABREF_SECRET_KEY or the key file) "
                "and run the migration again."
            ) from None
        return False
    return True


def seal_plain_values(
    bind: sa.engine.Connection,
    ring: MigrationRing,
    name: str,
    key: str,
    columns: dict[str, str],
) -> None:
    """Seal every plain value of ``columns`` ({column: purpose}, text columns) of table
    ``name``, ``BATCH`` rows at a time (keyset on its primary key ``key``)."""
    table = sa.table(name, sa.column(key), *(sa.column(column) for column in columns))
    row_key = table.c[key]
    # Every row with a value: a plain value may itself start with ``s1.`` (an e-mail, a
    # note), so only opening a value tells sealed from plain.
    held = sa.or_(*(table.c[column].is_not(None) for column in columns))
    change = (
        sa.update(table)
        .where(row_key == sa.bindparam("row_key"))
        .values({column: sa.bindparam(f"new_{column}") for column in columns})
    )
    after = ""
    while True:
        rows = bind.execute(
            sa.select(table).where(row_key > after, held).order_by(row_key).limit(BATCH)
        ).all()
        if not rows:
            return
        updates = []
        for row in rows:
            values = row._mapping
            update: dict[str, Any] = {"row_key": values[key]}
            for column, purpose in columns.items():
                value = values[column]
                kept = value is None or is_sealed_under(ring.get(), purpose, value)
                update[f"new_{column}"] = value if kept else seal(ring.get(), purpose, value)
            if any(update[f"new_{column}"] != values[column] for column in columns):
                updates.append(update)
        if updates:
            bind.execute(change, updates)
        after = str(rows[-1]._mapping[key])
