"""Assistant (patient intake) sessions and human contact tasks."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, Index, String
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
