"""Referral indexes on mostly-NULL columns only where the column is set (PostgreSQL)

A Shape V1 referral has no partner_reference, assigned physiotherapist or hosted link when it
is created; indexing those NULLs cost every create three index insertions. Lookups compare
with ``=`` or ``IN``, which imply NOT NULL, so PostgreSQL still uses the partial indexes.
SQLite keeps its full indexes (its schema is unchanged).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

# (index, columns, unique, the column that is often NULL)
INDEXES = (
    (
        "ix_referrals_partner_reference",
        ["partner_id", "environment", "partner_reference"],
        True,
        "partner_reference",
    ),
    ("ix_referrals_assigned_physio_id", ["assigned_physio_id"], False, "assigned_physio_id"),
    ("ix_referrals_link_id", ["link_id"], False, "link_id"),
)


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for name, columns, unique, nullable in INDEXES:
        op.drop_index(name, table_name="referrals")
        op.create_index(
            name,
            "referrals",
            columns,
            unique=unique,
            postgresql_where=sa.text(f"{nullable} IS NOT NULL"),
        )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for name, columns, unique, _ in INDEXES:
        op.drop_index(name, table_name="referrals")
        op.create_index(name, "referrals", columns, unique=unique)
