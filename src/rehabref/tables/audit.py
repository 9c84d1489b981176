"""The audit trail: who read or changed which referral, hash-chained (``rehabref.audit``).

``audit_events`` is append-only (on PostgreSQL a trigger refuses UPDATE and DELETE). The
records form ``CHAINS`` independent hash chains; ``audit_chain`` holds one head row per chain
(its last ``seq`` and ``hash``), locked by each append to that chain so its concurrent
writers chain in one order, while appends to other chains proceed (``audit.trail``).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, DateTime, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from rehabref.db import Base

# Independent chains, so concurrent writers rarely wait for each other (docs/security.md).
CHAINS = 16


class AuditEvent(Base):
    __tablename__ = "audit_events"
    __table_args__ = (
        UniqueConstraint("chain", "seq", name="uq_audit_events_chain_seq"),
        Index("ix_audit_events_referral_id", "referral_id", "id"),
        Index("ix_audit_events_actor_id", "actor_id", "id"),
    )

    # Time-ordered (``ids.new_id``): the listing's order and cursor.
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    # Which chain, and the position in it: 1, 2, 3 ... without gaps (its head hands them out).
    chain: Mapped[int] = mapped_column(Integer)
    seq: Mapped[int] = mapped_column(BigInteger)
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

    id: Mapped[int] = mapped_column(Integer, primary_key=True)  # the chain: 1 .. CHAINS
    seq: Mapped[int] = mapped_column(BigInteger)
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))
