"""care: physiotherapist registry, referral assignment, sessions, assessments, invoices

Revision ID: 0005
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "physiotherapists",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("license_number", sa.String(length=64), nullable=False),
        sa.Column("specializations", sa.JSON(), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("phone", sa.String(length=20), nullable=False),
        sa.Column("city", sa.String(length=100), nullable=False),
        sa.Column("city_key", sa.String(length=100), nullable=False),
        sa.Column("areas", sa.JSON(), nullable=False),
        sa.Column("modalities", sa.JSON(), nullable=False),
        sa.Column("weekly_capacity", sa.Integer(), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("license_number"),
    )
    op.create_index("ix_physiotherapists_city", "physiotherapists", ["city_key", "active"])
    with op.batch_alter_table("referrals", schema=None) as batch_op:
        batch_op.add_column(sa.Column("assigned_physio_id", sa.String(length=40), nullable=True))
        batch_op.add_column(sa.Column("matched_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index(
            batch_op.f("ix_referrals_assigned_physio_id"), ["assigned_physio_id"], unique=False
        )
    op.create_table(
        "care_sessions",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("referral_id", sa.String(length=40), nullable=False),
        sa.Column("partner_id", sa.String(length=40), nullable=False),
        sa.Column("environment", sa.String(length=8), nullable=False),
        sa.Column("physio_id", sa.String(length=40), nullable=False),
        sa.Column("session_number", sa.Integer(), nullable=False),
        sa.Column("session_type", sa.String(length=80), nullable=False),
        sa.Column("modality", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("scheduled_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("location_lat", sa.Float(), nullable=True),
        sa.Column("location_lng", sa.Float(), nullable=True),
        sa.Column("check_in_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("check_in_lat", sa.Float(), nullable=True),
        sa.Column("check_in_lng", sa.Float(), nullable=True),
        sa.Column("check_out_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("check_out_lat", sa.Float(), nullable=True),
        sa.Column("check_out_lng", sa.Float(), nullable=True),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("pain_before", sa.Integer(), nullable=True),
        sa.Column("pain_after", sa.Integer(), nullable=True),
        sa.Column("notes_summary", sa.Text(), nullable=True),
        sa.Column("gps_check", sa.JSON(), nullable=True),
        sa.Column("invoice_reference", sa.String(length=48), nullable=True),
        sa.Column("cancel_reason", sa.Text(), nullable=True),
        sa.Column("created_by", sa.String(length=80), nullable=False),
        sa.Column("updated_by", sa.String(length=80), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["partner_id"], ["partners.id"]),
        sa.ForeignKeyConstraint(["physio_id"], ["physiotherapists.id"]),
        sa.ForeignKeyConstraint(["referral_id"], ["referrals.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("invoice_reference"),
    )
    op.create_index(
        "ix_care_sessions_partner", "care_sessions", ["partner_id", "environment", "scheduled_at"]
    )
    op.create_index(
        "uq_care_sessions_number", "care_sessions", ["referral_id", "session_number"], unique=True
    )
    op.create_index("ix_care_sessions_physio_id", "care_sessions", ["physio_id"])
    op.create_table(
        "assessments",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("referral_id", sa.String(length=40), nullable=False),
        sa.Column("session_id", sa.String(length=40), nullable=True),
        sa.Column("scale", sa.String(length=8), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_by", sa.String(length=80), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["referral_id"], ["referrals.id"]),
        sa.ForeignKeyConstraint(["session_id"], ["care_sessions.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_assessments_referral", "assessments", ["referral_id", "recorded_at"])
    op.create_table(
        "invoice_counters",
        sa.Column("partner_id", sa.String(length=40), nullable=False),
        sa.Column("environment", sa.String(length=8), nullable=False),
        sa.Column("period", sa.String(length=6), nullable=False),
        sa.Column("last_item", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["partner_id"], ["partners.id"]),
        sa.PrimaryKeyConstraint("partner_id", "environment", "period"),
    )


def downgrade() -> None:
    op.drop_table("invoice_counters")
    op.drop_index("ix_assessments_referral", table_name="assessments")
    op.drop_table("assessments")
    op.drop_index("ix_care_sessions_physio_id", table_name="care_sessions")
    op.drop_index("uq_care_sessions_number", table_name="care_sessions")
    op.drop_index("ix_care_sessions_partner", table_name="care_sessions")
    op.drop_table("care_sessions")
    with op.batch_alter_table("referrals", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_referrals_assigned_physio_id"))
        batch_op.drop_column("matched_at")
        batch_op.drop_column("assigned_physio_id")
    op.drop_index("ix_physiotherapists_city", table_name="physiotherapists")
    op.drop_table("physiotherapists")
