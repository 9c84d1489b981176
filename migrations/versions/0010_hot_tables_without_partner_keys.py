"""Referrals and events without a foreign key to partners

Every referral create inserts a referral and an event, and each foreign key to ``partners``
made PostgreSQL lock the partner's row (``FOR KEY SHARE``). Creates of one partner run
concurrently, so those locks became multixacts on one hot row, written to WAL on every
create: with both keys dropped a create cost about a sixth less CPU in all (measured,
docs/performance.md). Partners are never deleted, and a referral or event is only written
for the partner a verified API key (or hosted link) belongs to, so the keys guarded nothing
that can happen. The other tables keep theirs.

SQLite rebuilds both tables (batch mode); its unnamed keys are found by a naming convention.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23
"""

from __future__ import annotations

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

TABLES = ("referrals", "events")
# PostgreSQL named the keys of migration 0001 itself; SQLite left them unnamed.
_NAMING = {"fk": "%(table_name)s_%(column_0_name)s_fkey"}


def _key(table: str) -> str:
    return f"{table}_partner_id_fkey"


def upgrade() -> None:
    for table in TABLES:
        if op.get_bind().dialect.name == "postgresql":
            op.drop_constraint(_key(table), table, type_="foreignkey")
        else:
            with op.batch_alter_table(table, naming_convention=_NAMING) as batch:
                batch.drop_constraint(_key(table), type_="foreignkey")


def downgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table, naming_convention=_NAMING) as batch:
            batch.create_foreign_key(_key(table), "partners", ["partner_id"], ["id"])
