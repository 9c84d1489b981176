"""Seal patient data at rest

- The referral's patient first and last name, phone and e-mail become sealed values
  (``s1.<key id>.<...>``, rehabref.crypto.seal): the columns become TEXT (a sealed value is
  longer than the plain one) and the plain-phone index goes (phones are found through
  ``patient_phone_index``).
- Existing rows are sealed here, in batches, under the ring the application reads (the key
  file or ``REHABREF_SECRET_KEY``, as 0014 reads it; ``rehabref.migration_sealing``).
  Idempotent: a value the ring opens is left as it is, so a migration interrupted half-way
  can simply run again.

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-24
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

from rehabref.migration_sealing import MigrationRing, seal_plain_values

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None

# (table, its primary key, {column: purpose}); the purposes are the application's
# (referrals/sealing.py), written out: a migration must not change when the code does.
SEALED: tuple[tuple[str, str, dict[str, str]], ...] = (
    (
        "referrals",
        "id",
        {
            "patient_first_name": "referral.patient_first_name",
            "patient_last_name": "referral.patient_last_name",
            "patient_phone": "referral.patient_phone",
            "patient_email": "referral.patient_email",
        },
    ),
)
WIDENED: dict[str, tuple[tuple[str, sa.types.TypeEngine[Any], bool], ...]] = {
    "referrals": (
        ("patient_first_name", sa.String(length=100), False),
        ("patient_last_name", sa.String(length=100), True),
        ("patient_phone", sa.String(length=20), True),
        ("patient_email", sa.String(length=254), True),
    ),
}


def upgrade() -> None:
    with op.batch_alter_table("referrals", schema=None) as batch_op:
        batch_op.drop_index("ix_referrals_patient_phone")
    for table, columns in WIDENED.items():
        with op.batch_alter_table(table, schema=None) as batch_op:
            for column, was, nullable in columns:
                batch_op.alter_column(
                    column, existing_type=was, type_=sa.Text(), existing_nullable=nullable
                )
    bind = op.get_bind()
    ring = MigrationRing(bind, revision)  # read once, on the first stored value
    for name, key, sealed_columns in SEALED:
        seal_plain_values(bind, ring, name, key, sealed_columns)


def downgrade() -> None:
    # Sealed values stay sealed and the columns TEXT: a sealed value does not fit the old
    # widths, and opening it needs the ring (the application reads sealed and plain values).
    with op.batch_alter_table("referrals", schema=None) as batch_op:
        batch_op.create_index("ix_referrals_patient_phone", ["patient_phone"], unique=False)
