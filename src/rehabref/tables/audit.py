"""The audit trail: who read or changed which referral, hash-chained (``rehabref.audit``).

``audit_events`` is append-only (on PostgreSQL a trigger refuses UPDATE and DELETE);
``audit_chain`` is its one-row head (the last ``seq`` and ``hash``), locked by each append so
concurrent writers chain in one order.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, DateTime, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from rehabref.db import Base


class AuditEvent(Base):
    __tablename__ = "audit_events"
    __table_args__ = (
        Index("ix_audit_events_referral_seq", "referral_id", "seq"),
        Index("ix_audit_events_actor_seq", "actor_id", "seq"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    # Position in the chain: 1, 2, 3 ... without gaps (the head row hands them out).
    seq: Mapped[int] = mapped_column(BigInteger, unique=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    actor_kind: Mapped[str] = mapped_column(String(20))  # partner | operator | physio | system
    actor_id: Mapped[str] = mapped_column(String(100))
    action: Mapped[str] = mapped_column(String(60))
    # Ids only, never patient data: the referral, and what else the action touched.
    referral_id: Mapped[str | None] = mapped_column(String(100), nullable=True)
    subject: Mapped[str | None] = mapped_column(String(100), nullable=True)
    request_id: Mapped[str | None] = mapped_column(String(128), nullable=True)
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))


class AuditChain(Base):
    __tablename__ = "audit_chain"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)  # always 1
    seq: Mapped[int] = mapped_column(BigInteger)
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))
