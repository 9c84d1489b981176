"""Shape G, HMO eligibility and the sandbox scheduler

Revision ID: 0006
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # partner_reference becomes unique per partner and environment (NULLs never collide).
    op.drop_index("ix_referrals_partner_reference", table_name="referrals")
    op.create_index(
        "ix_referrals_partner_reference",
        "referrals",
        ["partner_id", "environment", "partner_reference"],
        unique=True,
    )
    op.create_table(
        "hmo_members",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("hmo_code", sa.String(length=32), nullable=False),
        sa.Column("policy_number", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("phone", sa.String(length=20), nullable=False),
        sa.Column("plan_tier", sa.String(length=40), nullable=False),
        sa.Column("policy_status", sa.String(length=16), nullable=False),
        sa.Column("expiry_date", sa.Date(), nullable=False),
        sa.Column("physiotherapy_covered", sa.Boolean(), nullable=False),
        sa.Column("post_surgical_covered", sa.Boolean(), nullable=False),
        sa.Column("pre_auth_required", sa.Boolean(), nullable=False),
        sa.Column("annual_session_limit", sa.Integer(), nullable=False),
        sa.Column("sessions_used", sa.Integer(), nullable=False),
        sa.Column("co_pay_kobo", sa.Integer(), nullable=False),
        sa.Column("imported_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "uq_hmo_members_policy", "hmo_members", ["hmo_code", "policy_number"], unique=True
    )
    op.create_table(
        "referral_coverage",
        sa.Column("referral_id", sa.String(length=40), nullable=False),
        sa.Column("environment", sa.String(length=8), nullable=False),
        sa.Column("hmo_code", sa.String(length=32), nullable=False),
        sa.Column("policy_number", sa.String(length=64), nullable=False),
        sa.Column("procedure_code", sa.String(length=40), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["referral_id"], ["referrals.id"]),
        sa.PrimaryKeyConstraint("referral_id"),
    )
    op.create_table(
        "coverage_uses",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("environment", sa.String(length=8), nullable=False),
        sa.Column("hmo_code", sa.String(length=32), nullable=False),
        sa.Column("policy_number", sa.String(length=64), nullable=False),
        sa.Column("referral_id", sa.String(length=40), nullable=False),
        sa.Column("session_id", sa.String(length=40), nullable=True),
        sa.Column("consumed_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["referral_id"], ["referrals.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_coverage_uses_member",
        "coverage_uses",
        ["environment", "hmo_code", "policy_number"],
        unique=False,
    )
    op.create_index("uq_coverage_uses_session", "coverage_uses", ["session_id"], unique=True)
    op.create_index(
        op.f("ix_coverage_uses_referral_id"), "coverage_uses", ["referral_id"], unique=False
    )
    op.create_table(
        "scheduled_jobs",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("referral_id", sa.String(length=40), nullable=True),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("locked_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_scheduled_jobs_due", "scheduled_jobs", ["state", "due_at"], unique=False)
    op.create_index(
        op.f("ix_scheduled_jobs_referral_id"), "scheduled_jobs", ["referral_id"], unique=False
    )


def downgrade() -> None:
    op.drop_table("scheduled_jobs")
    op.drop_table("coverage_uses")
    op.drop_table("referral_coverage")
    op.drop_table("hmo_members")
    op.drop_index("ix_referrals_partner_reference", table_name="referrals")
    op.create_index(
        "ix_referrals_partner_reference",
        "referrals",
        ["partner_id", "environment", "partner_reference"],
        unique=False,
    )
