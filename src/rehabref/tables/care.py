"""Therapy sessions, assessments and the monthly invoice item counters."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from rehabref.db import Base


class CareSession(Base):
    """One therapy session of a referral (spec 2.6); statuses in ``care/sessions.py``."""

    __tablename__ = "care_sessions"
    __table_args__ = (
        Index("ix_care_sessions_partner", "partner_id", "environment", "scheduled_at"),
        Index("uq_care_sessions_number", "referral_id", "session_number", unique=True),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    referral_id: Mapped[str] = mapped_column(ForeignKey("referrals.id"))
    partner_id: Mapped[str] = mapped_column(ForeignKey("partners.id"))
    environment: Mapped[str] = mapped_column(String(8))
    physio_id: Mapped[str] = mapped_column(ForeignKey("physiotherapists.id"), index=True)
    session_number: Mapped[int] = mapped_column(Integer)
    session_type: Mapped[str] = mapped_column(String(80))
    modality: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16))
    scheduled_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # Optional visit address coordinates; GPS check-in is verified against them when set.
    location_lat: Mapped[float | None] = mapped_column(Float, nullable=True)
    location_lng: Mapped[float | None] = mapped_column(Float, nullable=True)
    check_in_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    check_in_lat: Mapped[float | None] = mapped_column(Float, nullable=True)
    check_in_lng: Mapped[float | None] = mapped_column(Float, nullable=True)
    # The device's reported accuracy (metres) of the check-in and check-out fixes, and why
    # there is no check-in fix when the device refused one (physiotherapist app).
    check_in_accuracy_m: Mapped[float | None] = mapped_column(Float, nullable=True)
    check_in_refusal: Mapped[str | None] = mapped_column(String(200), nullable=True)
    check_out_accuracy_m: Mapped[float | None] = mapped_column(Float, nullable=True)
    check_out_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    check_out_lat: Mapped[float | None] = mapped_column(Float, nullable=True)
    check_out_lng: Mapped[float | None] = mapped_column(Float, nullable=True)
    completed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    pain_before: Mapped[int | None] = mapped_column(Integer, nullable=True)
    pain_after: Mapped[int | None] = mapped_column(Integer, nullable=True)
    notes_summary: Mapped[str | None] = mapped_column(Text, nullable=True)
    # GPS check-in verification result: {verified, method, distance_km, radius_km}.
    gps_check: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    invoice_reference: Mapped[str | None] = mapped_column(String(48), nullable=True, unique=True)
    cancel_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_by: Mapped[str] = mapped_column(String(80))
    updated_by: Mapped[str] = mapped_column(String(80))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Assessment(Base):
    """An outcome measure recorded for a referral (PSFS, NDI, ODI, NPRS, VAS, ROM)."""

    __tablename__ = "assessments"
    __table_args__ = (Index("ix_assessments_referral", "referral_id", "recorded_at"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    referral_id: Mapped[str] = mapped_column(ForeignKey("referrals.id"))
    session_id: Mapped[str | None] = mapped_column(ForeignKey("care_sessions.id"), nullable=True)
    scale: Mapped[str] = mapped_column(String(8))
    # The headline value: PSFS mean (0-10), NDI/ODI percent (0-100), NPRS/VAS (0-10), ROM degrees.
    score: Mapped[float] = mapped_column(Float)
    # The answers as JSON text, sealed (care/sealing.py): a PSFS names the patient's activities.
    detail: Mapped[str] = mapped_column(Text)
    recorded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    created_by: Mapped[str] = mapped_column(String(80))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class InvoiceCounter(Base):
    """Last line number of a partner's monthly invoice, per environment."""

    __tablename__ = "invoice_counters"

    partner_id: Mapped[str] = mapped_column(ForeignKey("partners.id"), primary_key=True)
    environment: Mapped[str] = mapped_column(String(8), primary_key=True)
    period: Mapped[str] = mapped_column(String(6), primary_key=True)  # yyyymm
    last_item: Mapped[int] = mapped_column(Integer)
