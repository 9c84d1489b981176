"""Card payments (self-pay) through Paystack

- ``payment_requests``: what a patient is asked to pay, our Paystack reference, the hosted
  pay token and the initialization outbox (state, attempts, lease).
- ``payments``: each charge Paystack verified, applied to its referral or held.
- ``payment_refunds``: each processed refund once (unique Paystack refund id).

Revision ID: 0018
Revises: 0012
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "payment_requests",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("referral_id", sa.String(length=40), nullable=False),
        sa.Column("partner_id", sa.String(length=40), nullable=False),
        sa.Column("environment", sa.String(length=8), nullable=False),
        sa.Column("reference", sa.String(length=64), nullable=False),
        sa.Column("pay_token", sa.String(length=64), nullable=False),
        sa.Column("amount_minor", sa.Integer(), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("init_state", sa.String(length=16), nullable=False),
        sa.Column("init_attempts", sa.Integer(), nullable=False),
        sa.Column("init_next_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("claimed_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("authorization_url", sa.String(length=2048), nullable=True),
        sa.Column("last_error", sa.String(length=200), nullable=True),
        sa.Column("created_by", sa.String(length=80), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["partner_id"], ["partners.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("reference"),
        sa.UniqueConstraint("pay_token"),
    )
    with op.batch_alter_table("payment_requests", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_payment_requests_referral_id"), ["referral_id"], unique=False
        )
        batch_op.create_index(
            "ix_payment_requests_init_due",
            ["init_state", "init_next_at"],
            unique=False,
            postgresql_where=sa.text("init_state IN ('pending', 'sending')"),
        )

    op.create_table(
        "payments",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("payment_request_id", sa.String(length=40), nullable=False),
        sa.Column("referral_id", sa.String(length=40), nullable=False),
        sa.Column("reference", sa.String(length=64), nullable=False),
        sa.Column("provider", sa.String(length=16), nullable=False),
        sa.Column("amount_minor", sa.Integer(), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("hold_reason", sa.String(length=32), nullable=True),
        sa.Column("refunded_minor", sa.Integer(), nullable=False),
        sa.Column("paid_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("applied_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("payment_request_id"),
        sa.UniqueConstraint("reference"),
    )
    with op.batch_alter_table("payments", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_payments_referral_id"), ["referral_id"], unique=False)

    op.create_table(
        "payment_refunds",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("payment_id", sa.String(length=40), nullable=False),
        sa.Column("provider_refund_id", sa.String(length=64), nullable=False),
        sa.Column("amount_minor", sa.Integer(), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("provider_refund_id"),
    )
    with op.batch_alter_table("payment_refunds", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_payment_refunds_payment_id"), ["payment_id"], unique=False
        )


def downgrade() -> None:
    op.drop_table("payment_refunds")
    op.drop_table("payments")
    op.drop_table("payment_requests")
