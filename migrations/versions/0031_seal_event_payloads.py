"""Seal stored webhook events and the partner's metadata

- ``events.data`` (the event's payload) and ``events.body`` (the envelope signed and sent)
  become sealed values (``s1.<key id>.<...>``, rehabref.crypto.seal); ``data`` and
  ``referrals.partner_metadata`` change from JSON to TEXT and hold sealed JSON text.
- Existing rows are sealed here, in batches, under the ring the application reads (the key
  file or ``REHABREF_SECRET_KEY``, as 0025 reads it). Idempotent: a value this ring already
  opens is left as it is, so a migration interrupted half-way can simply run again. A
  metadata of JSON ``null`` becomes NULL (the application reads both as no metadata).

Revision ID: 0031
Revises: 0028
Create Date: 2026-11-24
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import op

from rehabref.config import load_settings
from rehabref.crypto import SEALED_PREFIX, KeyRing, SealedValueError, open_sealed, seal
from rehabref.instance_secret import load_key_ring

revision = "0031"
down_revision = "0028"
branch_labels = None
depends_on = None

BATCH = 500
# (table, its primary key, {column: purpose}); the purposes are the application's
# (events/sealing.py, referrals/partner_metadata.py), written out: a migration must not
# change when the code does.
SEALED: tuple[tuple[str, str, dict[str, str]], ...] = (
    ("events", "id", {"data": "event.data", "body": "event.body"}),
    ("referrals", "id", {"partner_metadata": "referral.partner_metadata"}),
)
# JSON columns that become TEXT: (table, column, nullable).
TO_TEXT: tuple[tuple[str, str, bool], ...] = (
    ("events", "data", False),
    ("referrals", "partner_metadata", True),
)
JSON_NULL = "null"


def _ring(bind: sa.engine.Connection) -> KeyRing:
    # The settings of the database being migrated (its default key file sits beside it).
    settings = load_settings(
        {**os.environ, "REHABREF_DATABASE_URL": bind.engine.url.render_as_string(False)}
    )
    key_file = Path(settings.secret_key_file)
    if not settings.secret_key and not key_file.exists():
        # Sealing under a key made up here would lock the rows away from the application.
        raise RuntimeError(
            f"Migration 0031 seals event payloads with the instance key, but no key was found "
            f"(REHABREF_SECRET_KEY is unset and {key_file} does not exist). Run it where the "
            "application's key is, or set REHABREF_SECRET_KEY / REHABREF_SECRET_KEY_FILE."
        )
    return load_key_ring(settings.secret_key, key_file)


def _is_sealed(ring: KeyRing, purpose: str, value: str) -> bool:
    """A value this ring opens (only such a value counts as sealed)."""
    if not value.startswith(SEALED_PREFIX):
        return False
    try:
        open_sealed(ring, purpose, value)
    except SealedValueError:
        return False
    return True


def _stored(ring: KeyRing, purpose: str, value: str | None) -> str | None:
    if value is None or value == JSON_NULL:
        return None
    return value if _is_sealed(ring, purpose, value) else seal(ring, purpose, value)


def _seal_table(
    bind: sa.engine.Connection,
    ring_of: dict[str, KeyRing],
    name: str,
    key: str,
    columns: dict[str, str],
) -> None:
    """Seal every plain value of ``columns``, ``BATCH`` rows at a time (keyset on ``key``)."""
    table = sa.table(name, sa.column(key), *(sa.column(column, sa.Text) for column in columns))
    row_key = table.c[key]
    plain = sa.or_(
        *(
            sa.and_(table.c[column].is_not(None), table.c[column].not_like(f"{SEALED_PREFIX}%"))
            for column in columns
        )
    )
    change = (
        sa.update(table)
        .where(row_key == sa.bindparam("row_key"))
        .values({column: sa.bindparam(f"new_{column}") for column in columns})
    )
    after = ""
    while True:
        rows = bind.execute(
            sa.select(table).where(row_key > after, plain).order_by(row_key).limit(BATCH)
        ).all()
        if not rows:
            return
        if "ring" not in ring_of:
            ring_of["ring"] = _ring(bind)
        ring = ring_of["ring"]
        updates = []
        for row in rows:
            values = row._mapping
            update: dict[str, Any] = {"row_key": values[key]}
            for column, purpose in columns.items():
                update[f"new_{column}"] = _stored(ring, purpose, values[column])
            updates.append(update)
        bind.execute(change, updates)
        after = str(rows[-1]._mapping[key])


def upgrade() -> None:
    for table, column, nullable in TO_TEXT:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.alter_column(
                column,
                existing_type=sa.JSON(),
                type_=sa.Text(),
                existing_nullable=nullable,
                postgresql_using=f"{column}::text",
            )
    bind = op.get_bind()
    ring_of: dict[str, KeyRing] = {}  # read once, and only when a row needs sealing
    for name, key, sealed_columns in SEALED:
        _seal_table(bind, ring_of, name, key, sealed_columns)


def downgrade() -> None:
    # Sealed values stay sealed and the columns TEXT: a sealed value is not JSON, and opening
    # it needs the ring (the application reads sealed and plain values).
    pass
