"""Seal clinical notes and free-text reasons about a patient's care

- Session notes and cancel reasons (``care_sessions.notes_summary``, ``cancel_reason``),
  outcome-measure answers (``assessments.detail``: JSON text, sealed, so the column becomes
  TEXT), why a referral moved (``referral_transitions.reason``), what a coordinator noted on
  a call (``contact_tasks.note``) and why a visit was cancelled or moved
  (``appointments.change_reason``) become sealed values (``s1.<key id>.<...>``,
  rehabref.crypto.seal).
- Existing rows are sealed here, in batches, under the ring the application reads
  (``rehabref.migration_sealing``). Idempotent: a value this ring already opens is left as
  it is, so a migration interrupted half-way can simply run again.

Revision ID: 0030
Revises: see down_revision (parallel sealing migrations are chained when merged)
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from rehabref.migration_sealing import MigrationRing, seal_plain_values

revision = "0030"
down_revision = "0029"
branch_labels = None
depends_on = None

# (table, its primary key, {column: purpose}); the purposes are the application's
# (care/sealing.py, referrals/coordinator_notes.py), written out: a migration must not
# change when the code does.
SEALED: tuple[tuple[str, str, dict[str, str]], ...] = (
    (
        "care_sessions",
        "id",
        {
            "notes_summary": "care_session.notes_summary",
            "cancel_reason": "care_session.cancel_reason",
        },
    ),
    ("assessments", "id", {"detail": "assessment.detail"}),
    ("referral_transitions", "id", {"reason": "referral_transition.reason"}),
    ("contact_tasks", "id", {"note": "contact_task.note"}),
    ("appointments", "id", {"change_reason": "appointment.change_reason"}),
)


def upgrade() -> None:
    # The answers are stored as sealed JSON text: a sealed value is not JSON.
    with op.batch_alter_table("assessments", schema=None) as batch_op:
        batch_op.alter_column(
            "detail",
            existing_type=sa.JSON(),
            type_=sa.Text(),
            existing_nullable=False,
            postgresql_using="detail::text",
        )
    bind = op.get_bind()
    ring = MigrationRing(bind, revision)  # read once, on the first stored value
    for name, key, sealed_columns in SEALED:
        seal_plain_values(bind, ring, name, key, sealed_columns)


def downgrade() -> None:
    # Sealed values stay sealed and ``assessments.detail`` stays TEXT: a sealed value is not
    # JSON, and opening it needs the ring (the application reads sealed and plain values).
    pass
