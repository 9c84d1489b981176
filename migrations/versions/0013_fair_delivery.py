"""Fair webhook delivery: endpoint health, disabling, cancelled deliveries, partner contact

- ``webhook_endpoints`` keeps its health (consecutive failures, failing since, circuit open
  until) and whether it is disabled (when, why).
- ``deliveries`` are found by endpoint and state (cancelling what a deleted or disabled
  endpoint is owed; a ``cancelled`` state needs no schema change).
- ``partners.contact_email``: where the partner is told an endpoint was disabled.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("webhook_endpoints", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("consecutive_failures", sa.Integer(), nullable=False, server_default="0")
        )
        batch_op.add_column(sa.Column("failing_since", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(
            sa.Column("circuit_open_until", sa.DateTime(timezone=True), nullable=True)
        )
        batch_op.add_column(sa.Column("disabled_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("disabled_reason", sa.String(length=32), nullable=True))
    with op.batch_alter_table("deliveries", schema=None) as batch_op:
        batch_op.create_index(
            "ix_deliveries_endpoint_state", ["endpoint_id", "state"], unique=False
        )
    with op.batch_alter_table("partners", schema=None) as batch_op:
        batch_op.add_column(sa.Column("contact_email", sa.String(length=254), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("partners", schema=None) as batch_op:
        batch_op.drop_column("contact_email")
    with op.batch_alter_table("deliveries", schema=None) as batch_op:
        batch_op.drop_index("ix_deliveries_endpoint_state")
    with op.batch_alter_table("webhook_endpoints", schema=None) as batch_op:
        batch_op.drop_column("disabled_reason")
        batch_op.drop_column("disabled_at")
        batch_op.drop_column("circuit_open_until")
        batch_op.drop_column("failing_since")
        batch_op.drop_column("consecutive_failures")
