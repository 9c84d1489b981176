"""Seal stored webhook events and the partner's metadata

- ``events.data`` (the event's payload), ``events.body`` (the envelope signed and sent) and
  ``delivery_attempts.response_excerpt`` (the receiver's answer, which may echo the body)
  become sealed values (``s1.<key id>.<...>``, rehabref.crypto.seal); ``data`` and
  ``referrals.partner_metadata`` change from JSON to TEXT and hold sealed JSON text.
- Existing rows are sealed here, in batches, under the ring the application reads
  (``rehabref.migration_sealing``). Idempotent: a value this ring already opens is left as
  it is, so a migration interrupted half-way can simply run again. A metadata of JSON
  ``null`` becomes NULL (the application reads both as no metadata).

Revision ID: 0031
Revises: 0030
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from rehabref.migration_sealing import MigrationRing, seal_plain_values

revision = "0031"
down_revision = "0030"
branch_labels = None
depends_on = None

# (table, its primary key, {column: purpose}); the purposes are the application's
# (events/sealing.py, referrals/partner_metadata.py), written out: a migration must not
# change when the code does.
SEALED: tuple[tuple[str, str, dict[str, str]], ...] = (
    ("events", "id", {"data": "event.data", "body": "event.body"}),
    ("referrals", "id", {"partner_metadata": "referral.partner_metadata"}),
    ("delivery_attempts", "id", {"response_excerpt": "delivery_attempt.response_excerpt"}),
)
# JSON columns that become TEXT: (table, column, nullable).
TO_TEXT: tuple[tuple[str, str, bool], ...] = (
    ("events", "data", False),
    ("referrals", "partner_metadata", True),
)
JSON_NULL = "null"


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
    with op.batch_alter_table("delivery_attempts", schema=None) as batch_op:
        batch_op.alter_column(
            "response_excerpt",
            existing_type=sa.String(length=1024),
            type_=sa.Text(),
            existing_nullable=True,
        )
    bind = op.get_bind()
    referrals = sa.table("referrals", sa.column("partner_metadata", sa.Text))
    bind.execute(
        sa.update(referrals)
        .where(referrals.c.partner_metadata == JSON_NULL)
        .values(partner_metadata=None)
    )
    ring = MigrationRing(bind, revision)  # read once, on the first stored value
    for name, key, sealed_columns in SEALED:
        seal_plain_values(bind, ring, name, key, sealed_columns)


def downgrade() -> None:
    # Sealed values stay sealed and the columns TEXT: a sealed value is not JSON, and opening
    # it needs the ring (the application reads sealed and plain values).
    pass
