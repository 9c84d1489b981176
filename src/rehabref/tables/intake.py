"""Assistant (patient intake) sessions, human contact tasks and the outbound message log."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, Index, String, Text
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


class OutboundMessage(Base):
    """What the messaging adapter was asked to send: never the text or the link itself."""

    __tablename__ = "outbound_messages"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    referral_id: Mapped[str | None] = mapped_column(String(40), nullable=True, index=True)
    # SHA-256 (hex, first 16 chars) of the recipient address: identifies, does not reveal.
    recipient_ref: Mapped[str] = mapped_column(String(16))
    template: Mapped[str] = mapped_column(String(64))
    provider: Mapped[str] = mapped_column(String(16))  # sandbox | console
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
