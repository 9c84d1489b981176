"""Partner commission statements (billing/commission_store.py).

One statement per partner, environment and month (``uq_commission_statements_period``, so a
repeated generate finds the one it made); a referral is on at most one statement line
(unique ``referral_id``), so no commission is ever counted twice.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, DateTime, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from rehabref.db import Base


class CommissionStatement(Base):
    __tablename__ = "commission_statements"
    __table_args__ = (
        UniqueConstraint(
            "partner_id", "environment", "period", name="uq_commission_statements_period"
        ),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    partner_id: Mapped[str] = mapped_column(String(40), ForeignKey("partners.id"))
    environment: Mapped[str] = mapped_column(String(8))
    # YYYY-MM; the lines are referrals paid in [first instant of the month, of the next).
    period: Mapped[str] = mapped_column(String(7))
    currency: Mapped[str] = mapped_column(String(3))
    # pending_settlement | settled
    status: Mapped[str] = mapped_column(String(24))
    line_count: Mapped[int] = mapped_column(Integer)
    amount_total_minor: Mapped[int] = mapped_column(BigInteger)
    commission_total_minor: Mapped[int] = mapped_column(BigInteger)
    created_by: Mapped[str] = mapped_column(String(80))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    settled_by: Mapped[str | None] = mapped_column(String(80), nullable=True)
    settled_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class CommissionStatementLine(Base):
    __tablename__ = "commission_statement_lines"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    statement_id: Mapped[str] = mapped_column(
        String(40), ForeignKey("commission_statements.id"), index=True
    )
    referral_id: Mapped[str] = mapped_column(String(40), unique=True)
    paid_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    currency: Mapped[str] = mapped_column(String(3))
    amount_minor: Mapped[int] = mapped_column(Integer)
    commission_minor: Mapped[int] = mapped_column(Integer)
