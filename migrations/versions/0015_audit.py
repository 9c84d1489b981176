"""Audit trail (hash-chained, append-only); operator roles, token expiry, TOTP; console sessions

- ``audit_events``: one row per read or change of patient data, in 16 hash chains;
  ``audit_chain``: one head row per chain (seq 0 and the all-zero genesis hash to start).
- On PostgreSQL a trigger refuses UPDATE and DELETE on ``audit_events``.
- ``operators``: ``role`` (coordinator | admin), ``expires_at``, ``totp_secret``.
- ``console_sessions``: each signed-in console browser's last request (idle sign-out).

Revision ID: 0015
Revises: 0012
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

GENESIS = "0" * 64
CHAINS = 16  # rehabref.tables.audit.CHAINS at this revision

APPEND_ONLY = """
CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_events is append-only (% refused)', TG_OP;
END
$$;
CREATE TRIGGER audit_events_append_only
    BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();
CREATE TRIGGER audit_events_no_truncate
    BEFORE TRUNCATE ON audit_events
    FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only();
"""


def upgrade() -> None:
    op.create_table(
        "audit_events",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("chain", sa.Integer(), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor_kind", sa.String(length=20), nullable=False),
        sa.Column("actor_id", sa.String(length=100), nullable=False),
        sa.Column("action", sa.String(length=60), nullable=False),
        sa.Column("referral_id", sa.String(length=100), nullable=True),
        sa.Column("subject", sa.String(length=100), nullable=True),
        sa.Column("request_id", sa.String(length=128), nullable=True),
        sa.Column("prev_hash", sa.String(length=64), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("chain", "seq", name="uq_audit_events_chain_seq"),
    )
    op.create_index("ix_audit_events_referral_id", "audit_events", ["referral_id", "id"])
    op.create_index("ix_audit_events_actor_id", "audit_events", ["actor_id", "id"])
    chain = op.create_table(
        "audit_chain",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("prev_hash", sa.String(length=64), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.bulk_insert(
        chain,
        [{"id": n, "seq": 0, "prev_hash": GENESIS, "hash": GENESIS} for n in range(1, CHAINS + 1)],
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(APPEND_ONLY)
    with op.batch_alter_table("operators", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("role", sa.String(length=20), server_default="coordinator", nullable=False)
        )
        batch_op.add_column(sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("totp_secret", sa.String(length=255), nullable=True))
    op.create_table(
        "console_sessions",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("operator_id", sa.String(length=40), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["operator_id"], ["operators.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_console_sessions_operator_id"), "console_sessions", ["operator_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_console_sessions_operator_id"), table_name="console_sessions")
    op.drop_table("console_sessions")
    with op.batch_alter_table("operators", schema=None) as batch_op:
        batch_op.drop_column("totp_secret")
        batch_op.drop_column("expires_at")
        batch_op.drop_column("role")
    op.drop_table("audit_events")  # its triggers go with it
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION audit_events_append_only()")
    op.drop_table("audit_chain")
