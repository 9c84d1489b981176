"""Hosted referral links: one unguessable public code per partner campaign."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, DateTime, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from rehabref.db import Base


class ReferralLink(Base):
    __tablename__ = "referral_links"
    __table_args__ = (Index("ix_referral_links_listing", "partner_id", "environment", "id"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    partner_id: Mapped[str] = mapped_column(ForeignKey("partners.id"))
    environment: Mapped[str] = mapped_column(String(8))
    campaign: Mapped[str] = mapped_column(String(100))
    # secrets.token_urlsafe(22): 176 random bits, no patient information.
    public_code: Mapped[str] = mapped_column(String(64), unique=True)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # Page views of the active link: a bare counter, no IP address or user agent is stored.
    click_count: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    deactivated_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
