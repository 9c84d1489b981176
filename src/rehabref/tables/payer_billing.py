"""HMO claim lines and monthly payer invoices (billing/claims.py, billing/payer_invoice_store.py).

A payer is an HMO (``payer_kind`` ``hmo``, ``payer_id`` its code) or a sponsoring employer
(``employer``, the partner id). Line numbers come from ``payer_invoice_counters`` (one atomic
upsert per completion), so concurrent completions never share one; a session is on at most
one line (unique ``session_id``) and a reference is never reused (unique
``invoice_reference``). One invoice per payer, environment and month (unique key).
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import BigInteger, Date, DateTime, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from rehabref.db import Base


class PayerInvoiceCounter(Base):
    __tablename__ = "payer_invoice_counters"

    payer_kind: Mapped[str] = mapped_column(String(16), primary_key=True)
    payer_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    environment: Mapped[str] = mapped_column(String(8), primary_key=True)
    period: Mapped[str] = mapped_column(String(7), primary_key=True)  # YYYY-MM
    last_line: Mapped[int] = mapped_column(Integer)


class ClaimLine(Base):
    """One completed session billed to an HMO or a sponsoring employer."""

    __tablename__ = "claim_lines"
    __table_args__ = (
        UniqueConstraint("session_id", name="uq_claim_lines_session"),
        UniqueConstraint("invoice_reference", name="uq_claim_lines_reference"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    payer_kind: Mapped[str] = mapped_column(String(16))  # hmo | employer
    payer_id: Mapped[str] = mapped_column(String(40))
    environment: Mapped[str] = mapped_column(String(8))
    period: Mapped[str] = mapped_column(String(7), index=True)
    invoice_number: Mapped[str] = mapped_column(String(64), index=True)
    line_number: Mapped[int] = mapped_column(Integer)
    invoice_reference: Mapped[str] = mapped_column(String(80))
    referral_id: Mapped[str] = mapped_column(String(40), index=True)
    session_id: Mapped[str] = mapped_column(String(40))
    member_id: Mapped[str | None] = mapped_column(String(64), nullable=True)  # policy number
    policy: Mapped[str | None] = mapped_column(String(40), nullable=True)  # plan tier
    pre_auth_token: Mapped[str | None] = mapped_column(Text, nullable=True)
    procedure_code: Mapped[str] = mapped_column(String(40))
    session_date: Mapped[date] = mapped_column(Date)
    currency: Mapped[str] = mapped_column(String(3))
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    co_pay_minor: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class PayerInvoice(Base):
    __tablename__ = "payer_invoices"
    __table_args__ = (
        UniqueConstraint(
            "payer_kind", "payer_id", "environment", "period", name="uq_payer_invoices_period"
        ),
        UniqueConstraint("number", name="uq_payer_invoices_number"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    number: Mapped[str] = mapped_column(String(64))
    payer_kind: Mapped[str] = mapped_column(String(16))
    payer_id: Mapped[str] = mapped_column(String(40))
    payer_name: Mapped[str] = mapped_column(String(200))
    environment: Mapped[str] = mapped_column(String(8))
    period: Mapped[str] = mapped_column(String(7))
    currency: Mapped[str] = mapped_column(String(3))
    status: Mapped[str] = mapped_column(String(16))  # draft | issued | paid
    line_count: Mapped[int] = mapped_column(Integer)
    amount_total_minor: Mapped[int] = mapped_column(BigInteger)
    co_pay_total_minor: Mapped[int] = mapped_column(BigInteger)
    payable_total_minor: Mapped[int] = mapped_column(BigInteger)
    created_by: Mapped[str] = mapped_column(String(80))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    issued_by: Mapped[str | None] = mapped_column(String(80), nullable=True)
    issued_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    paid_by: Mapped[str | None] = mapped_column(String(80), nullable=True)
    paid_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    remittance_reference: Mapped[str | None] = mapped_column(String(100), nullable=True)
