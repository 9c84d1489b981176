"""Scheduling and the physiotherapist app

- ``availability_rules``: weekly windows of a physiotherapist (Lagos time), slot length and
  the day's visit cap.
- ``availability_exceptions``: leave (one physiotherapist) and public holidays (all).
- ``appointments``: visits booked into slots. ``uq_appointments_slot`` (unique physiotherapist
  + slot start over the appointments holding their slot) is the double-booking guarantee;
  ``uq_appointments_referral_booked``: one upcoming visit per referral.
- ``physio_sign_in_links``, ``physio_app_sessions``, ``calendar_feeds``: the app's secrets,
  as SHA-256 digests.
- ``care_sessions``: device accuracy of the check-in/-out fixes and a refused check-in's
  reason; ``physiotherapists.email``.

Revision ID: 0023
Revises: 0020
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0020"
branch_labels = None
depends_on = None

HOLDS_SLOT = "status IN ('booked', 'attended')"
BOOKED = "status = 'booked'"


def upgrade() -> None:
    op.create_table(
        "availability_rules",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("physio_id", sa.String(length=40), nullable=False),
        sa.Column("weekday", sa.Integer(), nullable=False),
        sa.Column("start_minute", sa.Integer(), nullable=False),
        sa.Column("end_minute", sa.Integer(), nullable=False),
        sa.Column("slot_minutes", sa.Integer(), nullable=False),
        sa.Column("max_visits", sa.Integer(), nullable=True),
        sa.Column("created_by", sa.String(length=80), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["physio_id"], ["physiotherapists.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_availability_rules_physio_id", "availability_rules", ["physio_id"])
    op.create_table(
        "availability_exceptions",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("physio_id", sa.String(length=40), nullable=True),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("starts_on", sa.Date(), nullable=False),
        sa.Column("ends_on", sa.Date(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("created_by", sa.String(length=80), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["physio_id"], ["physiotherapists.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_availability_exceptions_physio_id", "availability_exceptions", ["physio_id"]
    )
    op.create_index(
        "ix_availability_exceptions_days", "availability_exceptions", ["starts_on", "ends_on"]
    )
    op.create_table(
        "appointments",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("referral_id", sa.String(length=40), nullable=False),
        sa.Column("physio_id", sa.String(length=40), nullable=False),
        sa.Column("partner_id", sa.String(length=40), nullable=False),
        sa.Column("environment", sa.String(length=8), nullable=False),
        sa.Column("starts_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ends_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("care_mode", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("session_id", sa.String(length=40), nullable=True),
        sa.Column("change_reason", sa.Text(), nullable=True),
        sa.Column("replaced_by", sa.String(length=40), nullable=True),
        sa.Column("attended_via", sa.String(length=16), nullable=True),
        sa.Column("attended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_by", sa.String(length=80), nullable=False),
        sa.Column("updated_by", sa.String(length=80), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["referral_id"], ["referrals.id"]),
        sa.ForeignKeyConstraint(["physio_id"], ["physiotherapists.id"]),
        sa.ForeignKeyConstraint(["partner_id"], ["partners.id"]),
        sa.ForeignKeyConstraint(["session_id"], ["care_sessions.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "uq_appointments_slot",
        "appointments",
        ["physio_id", "starts_at"],
        unique=True,
        sqlite_where=sa.text(HOLDS_SLOT),
        postgresql_where=sa.text(HOLDS_SLOT),
    )
    op.create_index(
        "uq_appointments_referral_booked",
        "appointments",
        ["referral_id"],
        unique=True,
        sqlite_where=sa.text(BOOKED),
        postgresql_where=sa.text(BOOKED),
    )
    op.create_index("ix_appointments_physio_day", "appointments", ["physio_id", "starts_at"])
    op.create_index("ix_appointments_referral_id", "appointments", ["referral_id"])
    op.create_index("ix_appointments_session_id", "appointments", ["session_id"])
    for name in ("physio_sign_in_links", "physio_app_sessions"):
        op.create_table(
            name,
            sa.Column("digest", sa.String(length=64), nullable=False),
            sa.Column("physio_id", sa.String(length=40), nullable=False),
            *(
                [sa.Column("channel", sa.String(length=16), nullable=False)]
                if name == "physio_sign_in_links"
                else []
            ),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
            sa.Column(
                "used_at" if name == "physio_sign_in_links" else "ended_at",
                sa.DateTime(timezone=True),
                nullable=True,
            ),
            sa.ForeignKeyConstraint(["physio_id"], ["physiotherapists.id"]),
            sa.PrimaryKeyConstraint("digest"),
        )
        op.create_index(f"ix_{name}_physio_id", name, ["physio_id"])
    op.create_table(
        "calendar_feeds",
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("physio_id", sa.String(length=40), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["physio_id"], ["physiotherapists.id"]),
        sa.PrimaryKeyConstraint("digest"),
    )
    op.create_index("ix_calendar_feeds_physio_id", "calendar_feeds", ["physio_id"])
    with op.batch_alter_table("care_sessions") as batch_op:
        batch_op.add_column(sa.Column("check_in_accuracy_m", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("check_in_refusal", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("check_out_accuracy_m", sa.Float(), nullable=True))
    with op.batch_alter_table("physiotherapists") as batch_op:
        batch_op.add_column(sa.Column("email", sa.String(length=254), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("physiotherapists") as batch_op:
        batch_op.drop_column("email")
    with op.batch_alter_table("care_sessions") as batch_op:
        batch_op.drop_column("check_out_accuracy_m")
        batch_op.drop_column("check_in_refusal")
        batch_op.drop_column("check_in_accuracy_m")
    op.drop_table("calendar_feeds")
    op.drop_table("physio_app_sessions")
    op.drop_table("physio_sign_in_links")
    op.drop_table("appointments")
    op.drop_table("availability_exceptions")
    op.drop_table("availability_rules")
