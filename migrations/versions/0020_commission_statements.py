"""Partner commission statements

- ``commission_statements``: one per partner, environment and month (unique), with its
  totals and settlement.
- ``commission_statement_lines``: the paid referrals of a statement; a referral is on at most
  one statement (unique ``referral_id``).

Revision ID: 0020
Revises: 0018
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "commission_statements",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("partner_id", sa.String(length=40), nullable=False),
        sa.Column("environment", sa.String(length=8), nullable=False),
        sa.Column("period", sa.String(length=7), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("status", sa.String(length=24), nullable=False),
        sa.Column("line_count", sa.Integer(), nullable=False),
        sa.Column("amount_total_minor", sa.BigInteger(), nullable=False),
        sa.Column("commission_total_minor", sa.BigInteger(), nullable=False),
        sa.Column("created_by", sa.String(length=80), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("settled_by", sa.String(length=80), nullable=True),
        sa.Column("settled_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["partner_id"], ["partners.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(
            "partner_id", "environment", "period", name="uq_commission_statements_period"
        ),
    )
    op.create_table(
        "commission_statement_lines",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("statement_id", sa.String(length=40), nullable=False),
        sa.Column("referral_id", sa.String(length=40), nullable=False),
        sa.Column("paid_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("amount_minor", sa.Integer(), nullable=False),
        sa.Column("commission_minor", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["statement_id"], ["commission_statements.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("referral_id"),
    )
    with op.batch_alter_table("commission_statement_lines", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_commission_statement_lines_statement_id"),
            ["statement_id"],
            unique=False,
        )


def downgrade() -> None:
    with op.batch_alter_table("commission_statement_lines", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_commission_statement_lines_statement_id"))
    op.drop_table("commission_statement_lines")
    op.drop_table("commission_statements")
