"""HMO member registry, per-referral coverage links, and allowance consumption."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import Boolean, Date, DateTime, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from rehabref.db import Base


class HmoMember(Base):
    """One insured member as the HMO's registry (CSV import) describes them. Live data only."""

    __tablename__ = "hmo_members"
    __table_args__ = (Index("uq_hmo_members_policy", "hmo_code", "policy_number", unique=True),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    hmo_code: Mapped[str] = mapped_column(String(32))
    policy_number: Mapped[str] = mapped_column(String(64))
    # Sealed (eligibility/member_sealing.py): the name, and the member's verified phone (E.164).
    name: Mapped[str] = mapped_column(Text)
    phone: Mapped[str] = mapped_column(Text)
    plan_tier: Mapped[str] = mapped_column(String(40))
    policy_status: Mapped[str] = mapped_column(String(16))  # active | inactive | suspended
    expiry_date: Mapped[date] = mapped_column(Date)
    physiotherapy_covered: Mapped[bool] = mapped_column(Boolean)
    post_surgical_covered: Mapped[bool] = mapped_column(Boolean)
    pre_auth_required: Mapped[bool] = mapped_column(Boolean)
    annual_session_limit: Mapped[int] = mapped_column(Integer)
    sessions_used: Mapped[int] = mapped_column(Integer)
    co_pay_kobo: Mapped[int] = mapped_column(Integer)
    imported_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ReferralCoverage(Base):
    """An hmo_direct_billing referral's verified pre-authorisation: which member pays."""

    __tablename__ = "referral_coverage"

    referral_id: Mapped[str] = mapped_column(ForeignKey("referrals.id"), primary_key=True)
    environment: Mapped[str] = mapped_column(String(8))
    hmo_code: Mapped[str] = mapped_column(String(32))
    policy_number: Mapped[str] = mapped_column(String(64))
    procedure_code: Mapped[str] = mapped_column(String(40))
    # The signed token the referral was created with: the HMO's proof of pre-authorisation,
    # copied onto each claim line (migration 0026).
    pre_auth_token: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class CoverageUse(Base):
    """One completed session charged to a member's annual allowance."""

    __tablename__ = "coverage_uses"
    __table_args__ = (
        Index("ix_coverage_uses_member", "environment", "hmo_code", "policy_number"),
        Index("uq_coverage_uses_session", "session_id", unique=True),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    environment: Mapped[str] = mapped_column(String(8))
    hmo_code: Mapped[str] = mapped_column(String(32))
    policy_number: Mapped[str] = mapped_column(String(64))
    referral_id: Mapped[str] = mapped_column(ForeignKey("referrals.id"), index=True)
    session_id: Mapped[str | None] = mapped_column(String(40), nullable=True)
    consumed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
