"""Card payments (self-pay): what a coordinator asked the patient to pay, what Paystack
confirmed, and refunds.

Each table is keyed so a provider's repeated delivery finds the row it already made:
``payments.reference`` and ``payments.payment_request_id`` are unique (one payment per
request), ``payment_refunds.provider_refund_id`` is unique (one refund per Paystack refund).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, Index, Integer, String, text
from sqlalchemy.orm import Mapped, mapped_column

from rehabref.db import Base


class PaymentRequest(Base):
    """An amount a patient is asked to pay by card, and its Paystack initialization (an
    outbox: ``init_state`` pending -> sending -> done, or failed after the retries)."""

    __tablename__ = "payment_requests"
    __table_args__ = (
        Index(
            "ix_payment_requests_init_due",
            "init_state",
            "init_next_at",
            postgresql_where=text("init_state IN ('pending', 'sending')"),
        ),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    referral_id: Mapped[str] = mapped_column(String(40), index=True)
    partner_id: Mapped[str] = mapped_column(String(40), ForeignKey("partners.id"))
    environment: Mapped[str] = mapped_column(String(8))
    # Ours, sent to Paystack as the transaction reference; unique across all requests.
    reference: Mapped[str] = mapped_column(String(64), unique=True)
    # The patient's link is /pay/{pay_token}: unguessable, no patient data.
    pay_token: Mapped[str] = mapped_column(String(64), unique=True)
    amount_minor: Mapped[int] = mapped_column(Integer)
    currency: Mapped[str] = mapped_column(String(3))
    # pending | paid | held | refunded
    status: Mapped[str] = mapped_column(String(16))
    # pending | sending | done | failed (live) ; not_needed (sandbox: no Paystack call)
    init_state: Mapped[str] = mapped_column(String(16))
    init_attempts: Mapped[int] = mapped_column(Integer)
    init_next_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    claimed_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    authorization_url: Mapped[str | None] = mapped_column(String(2048), nullable=True)
    last_error: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_by: Mapped[str] = mapped_column(String(80))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Payment(Base):
    """A charge Paystack confirmed (verify said success), applied to its referral or held."""

    __tablename__ = "payments"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    payment_request_id: Mapped[str] = mapped_column(String(40), unique=True)
    referral_id: Mapped[str] = mapped_column(String(40), index=True)
    reference: Mapped[str] = mapped_column(String(64), unique=True)
    provider: Mapped[str] = mapped_column(String(16))  # paystack | sandbox
    amount_minor: Mapped[int] = mapped_column(Integer)
    currency: Mapped[str] = mapped_column(String(3))
    # applied | held | refunded
    state: Mapped[str] = mapped_column(String(16))
    # awaiting_attendance | amount_mismatch | referral_status (while held)
    hold_reason: Mapped[str | None] = mapped_column(String(32), nullable=True)
    refunded_minor: Mapped[int] = mapped_column(Integer)
    paid_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    applied_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class PaymentRefund(Base):
    """One refund Paystack processed (``refund.processed``)."""

    __tablename__ = "payment_refunds"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    payment_id: Mapped[str] = mapped_column(String(40), index=True)
    provider_refund_id: Mapped[str] = mapped_column(String(64), unique=True)
    amount_minor: Mapped[int] = mapped_column(Integer)
    currency: Mapped[str] = mapped_column(String(3))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
