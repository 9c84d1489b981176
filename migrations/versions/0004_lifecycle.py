"""lifecycle: intake answers, contact task outcomes, outbound message log

Revision ID: 0004
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("assistant_sessions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("availability", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("care_mode", sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column("area", sa.String(length=100), nullable=True))
    with op.batch_alter_table("contact_tasks", schema=None) as batch_op:
        batch_op.add_column(sa.Column("outcome", sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column("note", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "outbound_messages",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("referral_id", sa.String(length=40), nullable=True),
        sa.Column("recipient_ref", sa.String(length=16), nullable=False),
        sa.Column("template", sa.String(length=64), nullable=False),
        sa.Column("provider", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("outbound_messages", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_outbound_messages_referral_id"), ["referral_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("outbound_messages", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_outbound_messages_referral_id"))
    op.drop_table("outbound_messages")
    with op.batch_alter_table("contact_tasks", schema=None) as batch_op:
        batch_op.drop_column("completed_at")
        batch_op.drop_column("note")
        batch_op.drop_column("outcome")
    with op.batch_alter_table("assistant_sessions", schema=None) as batch_op:
        batch_op.drop_column("area")
        batch_op.drop_column("care_mode")
        batch_op.drop_column("availability")
