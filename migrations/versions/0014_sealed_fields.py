"""Keys out of the database; blind indexes for finding a person's referrals

- The instance secret that earlier releases generated into ``instance_settings`` moves to the
  key file (as its oldest key, so what it signed stays valid) unless ``REHABREF_SECRET_KEY``
  is set; the table is dropped: a copy of the database no longer holds any key.
- ``referrals.patient_phone_index`` and ``patient_email_index``: keyed blind indexes
  (crypto.blind_index) by which a person's referrals are found; existing rows are indexed.

Revision ID: 0014
Revises: 0012
Create Date: 2026-11-24
"""

from __future__ import annotations

import os
from pathlib import Path

import sqlalchemy as sa
from alembic import op

from rehabref.config import load_settings
from rehabref.crypto import blind_index
from rehabref.instance_secret import adopt_legacy_secret, load_key_ring

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    bind = op.get_bind()
    # The settings of the database being migrated (its default key file sits beside it).
    settings = load_settings(
        {**os.environ, "REHABREF_DATABASE_URL": bind.engine.url.render_as_string(False)}
    )
    legacy = bind.execute(
        sa.text("SELECT value FROM instance_settings WHERE name = 'secret_key'")
    ).scalar()
    if legacy and not settings.secret_key:
        adopt_legacy_secret(Path(settings.secret_key_file), str(legacy))
    op.drop_table("instance_settings")

    with op.batch_alter_table("referrals", schema=None) as batch_op:
        batch_op.add_column(sa.Column("patient_phone_index", sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column("patient_email_index", sa.String(length=32), nullable=True))
        batch_op.create_index(
            batch_op.f("ix_referrals_patient_phone_index"), ["patient_phone_index"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_referrals_patient_email_index"), ["patient_email_index"], unique=False
        )

    rows = bind.execute(
        sa.text(
            "SELECT id, patient_phone, patient_email FROM referrals"
            " WHERE patient_phone IS NOT NULL OR patient_email IS NOT NULL"
        )
    ).all()
    if rows:
        ring = load_key_ring(settings.secret_key, Path(settings.secret_key_file))
        bind.execute(
            sa.text(
                "UPDATE referrals SET patient_phone_index = :phone, patient_email_index = :email"
                " WHERE id = :id"
            ),
            [
                {
                    "id": row.id,
                    "phone": blind_index(ring, "phone", row.patient_phone)
                    if row.patient_phone
                    else None,
                    "email": blind_index(ring, "email", row.patient_email)
                    if row.patient_email
                    else None,
                }
                for row in rows
            ],
        )


def downgrade() -> None:
    with op.batch_alter_table("referrals", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_referrals_patient_email_index"))
        batch_op.drop_index(batch_op.f("ix_referrals_patient_phone_index"))
        batch_op.drop_column("patient_email_index")
        batch_op.drop_column("patient_phone_index")
    # The keys stay in the key file: an older release reads REHABREF_SECRET_KEY instead.
    op.create_table(
        "instance_settings",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
