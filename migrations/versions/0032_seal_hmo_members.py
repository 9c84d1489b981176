"""Seal HMO members' names and phones

- ``hmo_members.name`` and ``phone`` become sealed values (``s1.<key id>.<...>``,
  rehabref.crypto.seal): the columns become TEXT (a sealed value is longer than the plain
  one). Members are still found by HMO code and policy number, which stay plain.
- Existing rows are sealed here, in batches, under the ring the application reads
  (``rehabref.migration_sealing``); a value the ring opens is left alone, so the migration
  can run again.

Revision ID: 0032
Revises: 0031
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from rehabref.migration_sealing import MigrationRing, seal_plain_values

revision = "0032"
down_revision = "0031"
branch_labels = None
depends_on = None

# The application's purposes (eligibility/member_sealing.py), written out: a migration must
# not change when the code does.
PURPOSES = {"name": "hmo_member.name", "phone": "hmo_member.phone"}


def upgrade() -> None:
    with op.batch_alter_table("hmo_members", schema=None) as batch_op:
        batch_op.alter_column(
            "name", existing_type=sa.String(length=200), type_=sa.Text(), existing_nullable=False
        )
        batch_op.alter_column(
            "phone", existing_type=sa.String(length=20), type_=sa.Text(), existing_nullable=False
        )
    bind = op.get_bind()
    seal_plain_values(bind, MigrationRing(bind, revision), "hmo_members", "id", PURPOSES)


def downgrade() -> None:
    # Sealed values stay sealed and the columns TEXT: a sealed value does not fit the old
    # widths, and opening it needs the ring (the application reads sealed and plain values).
    pass
