"""Assistant (patient intake) sessions and conversations, and human contact tasks."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, Index, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from rehabref.db import Base


class AssistantSession(Base):
    __tablename__ = "assistant_sessions"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    referral_id: Mapped[str] = mapped_column(ForeignKey("referrals.id"), index=True)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    opened_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    completed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # Answers collected by the intake pages (set when completed).
    # Comma-separated slots, e.g. "weekday_mornings,weekends".
    availability: Mapped[str | None] = mapped_column(String(200), nullable=True)
    care_mode: Mapped[str | None] = mapped_column(String(16), nullable=True)  # home_visit | ...
    area: Mapped[str | None] = mapped_column(String(100), nullable=True)


class ContactTask(Base):
    """A human follow-up through the patient's preferred channel."""

    __tablename__ = "contact_tasks"
    __table_args__ = (Index("ix_contact_tasks_queue", "status", "id"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    referral_id: Mapped[str] = mapped_column(ForeignKey("referrals.id"), index=True)
    partner_id: Mapped[str] = mapped_column(ForeignKey("partners.id"))
    environment: Mapped[str] = mapped_column(String(8))
    channel: Mapped[str] = mapped_column(String(16))
    purpose: Mapped[str] = mapped_column(String(32))  # initial_contact | unmatched | ...
    status: Mapped[str] = mapped_column(String(16))  # open | claimed | done
    claimed_by: Mapped[str | None] = mapped_column(String(80), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # reached | unreachable | assistant_link_sent | cancelled
    outcome: Mapped[str | None] = mapped_column(String(32), nullable=True)
    note: Mapped[str | None] = mapped_column(Text, nullable=True)
    completed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class IntakeConversation(Base):
    """The assistant conversation of one referral: where the dialogue stands, on which
    channel, and when the patient was last heard from (reminder after 24 h, hand-over
    after 72 h of silence)."""

    __tablename__ = "intake_conversations"
    __table_args__ = (
        # Patients' replies reach live conversations only.
        Index(
            "ix_intake_conversations_recipient",
            "recipient_ref",
            "updated_at",
            postgresql_where=text("environment = 'live'"),
        ),
        Index("ix_intake_conversations_nudge", "nudge_at"),
    )

    referral_id: Mapped[str] = mapped_column(ForeignKey("referrals.id"), primary_key=True)
    environment: Mapped[str] = mapped_column(String(8))
    channel: Mapped[str] = mapped_column(String(16))  # whatsapp | sms | email
    # The patient's address's blind index (channels.sealing.address_ref).
    recipient_ref: Mapped[str] = mapped_column(String(64))
    # ``intake.dialogue.State.to_json()`` as JSON text, sealed (it holds typed answers).
    state: Mapped[str] = mapped_column(Text)
    engaged_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    last_inbound_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    reminded_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # When silence next needs an action (reminder, then hand-over); None when it never does.
    nudge_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    closed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
