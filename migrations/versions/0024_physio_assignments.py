"""Physiotherapist assignments (the coordinator workbench)

- ``physio_assignments``: one row per automatic match or coordinator (re)assignment of a
  referral, with the matching facts or the coordinator's sealed reason.

Revision ID: 0024
Revises: 0020
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "physio_assignments",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("referral_id", sa.String(length=40), nullable=False),
        sa.Column("physio_id", sa.String(length=40), nullable=False),
        sa.Column("previous_physio_id", sa.String(length=40), nullable=True),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("basis", sa.JSON(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("actor", sa.String(length=80), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["physio_id"], ["physiotherapists.id"]),
        sa.ForeignKeyConstraint(["referral_id"], ["referrals.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("physio_assignments", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_physio_assignments_referral_id"), ["referral_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("physio_assignments", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_physio_assignments_referral_id"))
    op.drop_table("physio_assignments")
