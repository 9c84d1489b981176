"""Merge the domain branches; operators.console_sessions_after (sign out everywhere)

Revision ID: 0008
Revises: 0003, 0004, 0005, 0006, 0007
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = ("0003", "0004", "0005", "0006", "0007")
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("operators", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("console_sessions_after", sa.DateTime(timezone=True), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("operators", schema=None) as batch_op:
        batch_op.drop_column("console_sessions_after")
