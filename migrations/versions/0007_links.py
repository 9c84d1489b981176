"""hosted referral links; referrals.link_id and referrals.campaign

Revision ID: 0007
Revises: 0002
Create Date: 2026-11-22 00:15:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "referral_links",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("partner_id", sa.String(length=40), nullable=False),
        sa.Column("environment", sa.String(length=8), nullable=False),
        sa.Column("campaign", sa.String(length=100), nullable=False),
        sa.Column("public_code", sa.String(length=64), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("click_count", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("deactivated_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["partner_id"], ["partners.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("public_code"),
    )
    with op.batch_alter_table("referral_links", schema=None) as batch_op:
        batch_op.create_index(
            "ix_referral_links_listing", ["partner_id", "environment", "id"], unique=False
        )
    with op.batch_alter_table("referrals", schema=None) as batch_op:
        batch_op.add_column(sa.Column("link_id", sa.String(length=40), nullable=True))
        batch_op.add_column(sa.Column("campaign", sa.String(length=100), nullable=True))
        batch_op.create_index("ix_referrals_link_id", ["link_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("referrals", schema=None) as batch_op:
        batch_op.drop_index("ix_referrals_link_id")
        batch_op.drop_column("campaign")
        batch_op.drop_column("link_id")
    with op.batch_alter_table("referral_links", schema=None) as batch_op:
        batch_op.drop_index("ix_referral_links_listing")
    op.drop_table("referral_links")
