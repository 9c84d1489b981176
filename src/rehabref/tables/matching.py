"""Physiotherapists: the live registry and the partners' sandbox rosters, kept apart by
``environment`` (live rows have no ``partner_id``; a sandbox roster row belongs to one
partner's test environment)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, DateTime, Float, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from rehabref.db import Base


class Physiotherapist(Base):
    __tablename__ = "physiotherapists"
    __table_args__ = (
        Index("uq_physiotherapists_license", "environment", "license_number", unique=True),
        Index("ix_physiotherapists_roster", "environment", "city_key", "partner_id", "active"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    # live: the registry every live referral is matched from; test: a sandbox roster.
    environment: Mapped[str] = mapped_column(String(8), server_default="live")
    # The partner a sandbox roster row belongs to; None for the live registry.
    partner_id: Mapped[str | None] = mapped_column(ForeignKey("partners.id"), nullable=True)
    license_number: Mapped[str] = mapped_column(String(64))
    # Ordered list; the first entry is the primary specialization shown to partners.
    specializations: Mapped[list[str]] = mapped_column(JSON)
    rating: Mapped[float] = mapped_column(Float)
    phone: Mapped[str] = mapped_column(String(20))
    # Where the physiotherapist app's sign-in links may also go (migration 0023).
    email: Mapped[str | None] = mapped_column(String(254), nullable=True)
    city: Mapped[str] = mapped_column(String(100))
    # Normalised city (lower case, aliases resolved) used for matching.
    city_key: Mapped[str] = mapped_column(String(100))
    areas: Mapped[list[str]] = mapped_column(JSON)
    modalities: Mapped[list[str]] = mapped_column(JSON)
    weekly_capacity: Mapped[int] = mapped_column(Integer)
    active: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
