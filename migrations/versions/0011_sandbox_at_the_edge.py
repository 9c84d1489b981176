"""Sandbox at the edge: no simulated failures in deliveries; attempt notes; scoped roster

- ``deliveries.simulated_failures`` is dropped: the sandbox's phone-5 copies are made by a
  sandbox-only delivery transport, not by a column the worker reads.
- ``delivery_attempts.note`` says what an attempt was when it was not an ordinary send (the
  phone-5 copies: first copy, simulated 500, retry, stale replay).
- ``physiotherapists`` gets ``environment`` (existing rows are the live registry) and
  ``partner_id`` (set on a partner's sandbox roster rows), and licence numbers are unique per
  environment instead of globally, so a sandbox roster can never collide with the registry.

SQLite rebuilds the tables (batch mode); its unnamed unique constraint is found by a naming
convention that gives PostgreSQL's own name.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

_NAMING = {
    "uq": "%(table_name)s_%(column_0_name)s_key",
    "fk": "%(table_name)s_%(column_0_name)s_fkey",
}


def upgrade() -> None:
    with op.batch_alter_table("deliveries") as batch:
        batch.drop_column("simulated_failures")
    with op.batch_alter_table("delivery_attempts") as batch:
        batch.add_column(sa.Column("note", sa.String(length=200), nullable=True))
    with op.batch_alter_table("physiotherapists", naming_convention=_NAMING) as batch:
        batch.add_column(
            sa.Column("environment", sa.String(length=8), server_default="live", nullable=False)
        )
        batch.add_column(sa.Column("partner_id", sa.String(length=40), nullable=True))
        batch.create_foreign_key(
            "physiotherapists_partner_id_fkey", "partners", ["partner_id"], ["id"]
        )
        batch.drop_constraint("physiotherapists_license_number_key", type_="unique")
        batch.drop_index("ix_physiotherapists_city")
        batch.create_index(
            "uq_physiotherapists_license", ["environment", "license_number"], unique=True
        )
        batch.create_index(
            "ix_physiotherapists_roster", ["environment", "city_key", "partner_id", "active"]
        )


def downgrade() -> None:
    op.execute("DELETE FROM physiotherapists WHERE environment <> 'live'")
    with op.batch_alter_table("physiotherapists", naming_convention=_NAMING) as batch:
        batch.drop_index("ix_physiotherapists_roster")
        batch.drop_index("uq_physiotherapists_license")
        batch.create_index("ix_physiotherapists_city", ["city_key", "active"])
        batch.create_unique_constraint("physiotherapists_license_number_key", ["license_number"])
        batch.drop_constraint("physiotherapists_partner_id_fkey", type_="foreignkey")
        batch.drop_column("partner_id")
        batch.drop_column("environment")
    with op.batch_alter_table("delivery_attempts") as batch:
        batch.drop_column("note")
    with op.batch_alter_table("deliveries") as batch:
        batch.add_column(
            sa.Column("simulated_failures", sa.Integer(), server_default="0", nullable=False)
        )
