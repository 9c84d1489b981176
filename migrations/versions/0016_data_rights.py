"""Patients' rights: consent withdrawal and erasure marks on referrals, data-subject requests.

- ``referrals.consent_withdrawn_at``: when the patient withdrew consent (link, STOP, phone).
- ``referrals.erased_at``: when its personal and clinical fields were scrubbed.
- ``data_subject_requests``: export / erasure / withdrawal requests, identifiers hashed.

Revision ID: 0016
Revises: 0012
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "referrals", sa.Column("consent_withdrawn_at", sa.DateTime(timezone=True), nullable=True)
    )
    op.add_column("referrals", sa.Column("erased_at", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "data_subject_requests",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("phone_hash", sa.String(length=64), nullable=True),
        sa.Column("email_hash", sa.String(length=64), nullable=True),
        sa.Column("actor", sa.String(length=80), nullable=False),
        sa.Column("result", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_data_subject_requests_phone_hash", "data_subject_requests", ["phone_hash"])
    op.create_index("ix_data_subject_requests_email_hash", "data_subject_requests", ["email_hash"])


def downgrade() -> None:
    op.drop_index("ix_data_subject_requests_email_hash", table_name="data_subject_requests")
    op.drop_index("ix_data_subject_requests_phone_hash", table_name="data_subject_requests")
    op.drop_table("data_subject_requests")
    with op.batch_alter_table("referrals") as batch:
        batch.drop_column("erased_at")
        batch.drop_column("consent_withdrawn_at")
