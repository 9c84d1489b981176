"""Seal clinical notes and free-text reasons about a patient's care

- Session notes and cancel reasons (``care_sessions.notes_summary``, ``cancel_reason``),
  outcome-measure answers (``assessments.detail``: JSON text, sealed, so the column becomes
  TEXT), why a referral moved (``referral_transitions.reason``), what a coordinator noted on
  a call (``contact_tasks.note``) and why a visit was cancelled or moved
  (``appointments.change_reason``) become sealed values (``s1.<key id>.<...>``,
  rehabref.crypto.seal).
- Existing rows are sealed here, in batches, under the ring the application reads (the key
  file or ``REHABREF_SECRET_KEY``, as 0025 reads it). Idempotent: a value this ring already
  opens is left as it is, so a migration interrupted half-way can simply run again.

Revision ID: 0030
Revises: see down_revision (parallel sealing migrations are chained when merged)
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

revision = "0030"
down_revision = "0028"
branch_labels = None
depends_on = None

BATCH = 500
# (table, its primary key, {column: purpose}); the purposes are the application's
# (care/sealing.py, referrals/coordinator_notes.py), written out: a migration must not
# change when the code does.
SEALED: tuple[tuple[str, str, dict[str, str]], ...] = (
    (
        "care_sessions",
        "id",
        {
            "notes_summary": "care_session.notes_summary",
            "cancel_reason": "care_session.cancel_reason",
        },
    ),
    ("assessments", "id", {"detail": "assessment.detail"}),
    ("referral_transitions", "id", {"reason": "referral_transition.reason"}),
    ("contact_tasks", "id", {"note": "contact_task.note"}),
    ("appointments", "id", {"change_reason": "appointment.change_reason"}),
)


def _ring(bind: sa.engine.Connection) -> KeyRing:
    # The settings of the database being migrated (its default key file sits beside it).
    settings = load_settings(
        {**os.environ, "REHABREF_DATABASE_URL": bind.engine.url.render_as_string(False)}
    )
    key_file = Path(settings.secret_key_file)
    if not settings.secret_key and not key_file.exists():
        # Sealing under a key made up here would lock the rows away from the application.
        raise RuntimeError(
            f"Migration 0030 seals care notes with the instance key, but no key was found "
            f"(REHABREF_SECRET_KEY is unset and {key_file} does not exist). Run it where the "
            "application's key is, or set REHABREF_SECRET_KEY / REHABREF_SECRET_KEY_FILE."
        )
    return load_key_ring(settings.secret_key, key_file)


def _is_sealed(ring: KeyRing, purpose: str, value: str) -> bool:
    """A value this ring opens (a plain note may start with ``s1.`` too)."""
    if not value.startswith(SEALED_PREFIX):
        return False
    try:
        open_sealed(ring, purpose, value)
    except SealedValueError:
        return False
    return True


def _seal_table(
    bind: sa.engine.Connection,
    ring_of: dict[str, KeyRing],
    name: str,
    key: str,
    columns: dict[str, str],
) -> None:
    """Seal every plain value of ``columns``, ``BATCH`` rows at a time (keyset on ``key``)."""
    table = sa.table(name, sa.column(key), *(sa.column(column, sa.Text()) for column in columns))
    row_key = table.c[key]
    # A sealed value has no space (key id and base64url): free text that merely starts
    # with "s1." usually has one, so it is picked up and sealed too.
    plain = sa.or_(
        *(
            sa.or_(
                table.c[column].not_like(f"{SEALED_PREFIX}%"),
                table.c[column].like(f"{SEALED_PREFIX}% %"),
            )
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
                value = values[column]
                kept = value is None or _is_sealed(ring, purpose, value)
                update[f"new_{column}"] = value if kept else seal(ring, purpose, value)
            updates.append(update)
        bind.execute(change, updates)
        after = str(rows[-1]._mapping[key])


def upgrade() -> None:
    # The answers are stored as sealed JSON text: a sealed value is not JSON.
    with op.batch_alter_table("assessments", schema=None) as batch_op:
        batch_op.alter_column(
            "detail",
            existing_type=sa.JSON(),
            type_=sa.Text(),
            existing_nullable=False,
            postgresql_using="detail::text",
        )
    bind = op.get_bind()
    ring_of: dict[str, KeyRing] = {}  # read once, and only when a row needs sealing
    for name, key, sealed_columns in SEALED:
        _seal_table(bind, ring_of, name, key, sealed_columns)


def downgrade() -> None:
    # Sealed values stay sealed and ``assessments.detail`` stays TEXT: a sealed value is not
    # JSON, and opening it needs the ring (the application reads sealed and plain values).
    pass
