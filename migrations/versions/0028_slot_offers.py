"""Slots offered in the assistant conversation

- ``slot_offers``: the free slots shown to a patient, numbered in the order shown, so a
  reply books exactly what was offered; at most one open offer per referral.

Revision ID: 0028
Revises: 0024
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0028"
down_revision = "0026"
branch_labels = None
depends_on = None

OPEN = "status = 'open'"


def upgrade() -> None:
    op.create_table(
        "slot_offers",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("referral_id", sa.String(length=40), nullable=False),
        sa.Column("physio_id", sa.String(length=40), nullable=False),
        sa.Column("environment", sa.String(length=8), nullable=False),
        sa.Column("channel", sa.String(length=16), nullable=False),
        sa.Column("language", sa.String(length=8), nullable=False),
        sa.Column("care_mode", sa.String(length=16), nullable=False),
        sa.Column("slots", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("appointment_id", sa.String(length=40), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("answered_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["physio_id"], ["physiotherapists.id"]),
        sa.ForeignKeyConstraint(["referral_id"], ["referrals.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("slot_offers", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_slot_offers_referral_id"), ["referral_id"], unique=False
        )
        batch_op.create_index(
            "uq_slot_offers_referral_open",
            ["referral_id"],
            unique=True,
            sqlite_where=sa.text(OPEN),
            postgresql_where=sa.text(OPEN),
        )


def downgrade() -> None:
    with op.batch_alter_table("slot_offers", schema=None) as batch_op:
        batch_op.drop_index("uq_slot_offers_referral_open")
        batch_op.drop_index(batch_op.f("ix_slot_offers_referral_id"))
    op.drop_table("slot_offers")
