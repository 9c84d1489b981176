"""HMO claim lines and monthly payer invoices

- ``referral_coverage.pre_auth_token``: the signed token a referral was created with.
- ``payer_invoice_counters``: the last line number per payer, environment and month.
- ``claim_lines``: one completed session billed to an HMO or sponsoring employer.
- ``payer_invoices``: one invoice per payer, environment and month (draft, issued, paid).

Revision ID: 0026
Revises: 0024
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("referral_coverage", schema=None) as batch_op:
        batch_op.add_column(sa.Column("pre_auth_token", sa.Text(), nullable=True))
    op.create_table(
        "payer_invoice_counters",
        sa.Column("payer_kind", sa.String(length=16), nullable=False),
        sa.Column("payer_id", sa.String(length=40), nullable=False),
        sa.Column("environment", sa.String(length=8), nullable=False),
        sa.Column("period", sa.String(length=7), nullable=False),
        sa.Column("last_line", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("payer_kind", "payer_id", "environment", "period"),
    )
    op.create_table(
        "claim_lines",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("payer_kind", sa.String(length=16), nullable=False),
        sa.Column("payer_id", sa.String(length=40), nullable=False),
        sa.Column("environment", sa.String(length=8), nullable=False),
        sa.Column("period", sa.String(length=7), nullable=False),
        sa.Column("invoice_number", sa.String(length=64), nullable=False),
        sa.Column("line_number", sa.Integer(), nullable=False),
        sa.Column("invoice_reference", sa.String(length=80), nullable=False),
        sa.Column("referral_id", sa.String(length=40), nullable=False),
        sa.Column("session_id", sa.String(length=40), nullable=False),
        sa.Column("member_id", sa.String(length=64), nullable=True),
        sa.Column("policy", sa.String(length=40), nullable=True),
        sa.Column("pre_auth_token", sa.Text(), nullable=True),
        sa.Column("procedure_code", sa.String(length=40), nullable=False),
        sa.Column("session_date", sa.Date(), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("amount_minor", sa.BigInteger(), nullable=False),
        sa.Column("co_pay_minor", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("session_id", name="uq_claim_lines_session"),
        sa.UniqueConstraint("invoice_reference", name="uq_claim_lines_reference"),
    )
    with op.batch_alter_table("claim_lines", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_claim_lines_period"), ["period"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_claim_lines_invoice_number"), ["invoice_number"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_claim_lines_referral_id"), ["referral_id"], unique=False
        )
    op.create_table(
        "payer_invoices",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("number", sa.String(length=64), nullable=False),
        sa.Column("payer_kind", sa.String(length=16), nullable=False),
        sa.Column("payer_id", sa.String(length=40), nullable=False),
        sa.Column("payer_name", sa.String(length=200), nullable=False),
        sa.Column("environment", sa.String(length=8), nullable=False),
        sa.Column("period", sa.String(length=7), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("line_count", sa.Integer(), nullable=False),
        sa.Column("amount_total_minor", sa.BigInteger(), nullable=False),
        sa.Column("co_pay_total_minor", sa.BigInteger(), nullable=False),
        sa.Column("payable_total_minor", sa.BigInteger(), nullable=False),
        sa.Column("created_by", sa.String(length=80), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("issued_by", sa.String(length=80), nullable=True),
        sa.Column("issued_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("paid_by", sa.String(length=80), nullable=True),
        sa.Column("paid_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("remittance_reference", sa.String(length=100), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(
            "payer_kind", "payer_id", "environment", "period", name="uq_payer_invoices_period"
        ),
        sa.UniqueConstraint("number", name="uq_payer_invoices_number"),
    )


def downgrade() -> None:
    op.drop_table("payer_invoices")
    with op.batch_alter_table("claim_lines", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_claim_lines_referral_id"))
        batch_op.drop_index(batch_op.f("ix_claim_lines_invoice_number"))
        batch_op.drop_index(batch_op.f("ix_claim_lines_period"))
    op.drop_table("claim_lines")
    op.drop_table("payer_invoice_counters")
    with op.batch_alter_table("referral_coverage", schema=None) as batch_op:
        batch_op.drop_column("pre_auth_token")
