"""Scheduling: physiotherapists' weekly availability, its exceptions, and booked appointments.

The one guarantee that matters here is that a physiotherapist's slot is never given to two
patients: ``uq_appointments_slot`` is a unique index on (physiotherapist, slot start) over the
appointments that hold their slot (``booked``, ``attended``), partial on both SQLite and
PostgreSQL, so it holds whatever the code above it does (migration 0023).

``slot_offers`` keeps the slots shown to a patient in the assistant conversation, in the
order they were numbered, so a reply maps to exactly what was shown (migration 0028).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import JSON, Date, DateTime, ForeignKey, Index, Integer, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from rehabref.db import Base

# Appointment statuses that occupy their slot (the rest freed it).
HOLDS_SLOT = "status IN ('booked', 'attended')"


class AvailabilityRule(Base):
    """A weekly window of a physiotherapist, in Lagos time: weekday 0 (Monday) .. 6, minutes
    after midnight, cut into ``slot_minutes`` slots; ``max_visits`` caps that day's visits."""

    __tablename__ = "availability_rules"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    physio_id: Mapped[str] = mapped_column(ForeignKey("physiotherapists.id"), index=True)
    weekday: Mapped[int] = mapped_column(Integer)
    start_minute: Mapped[int] = mapped_column(Integer)
    end_minute: Mapped[int] = mapped_column(Integer)
    slot_minutes: Mapped[int] = mapped_column(Integer)
    max_visits: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_by: Mapped[str] = mapped_column(String(80))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class AvailabilityException(Base):
    """Days off: one physiotherapist's leave, or (``physio_id`` NULL) a public holiday."""

    __tablename__ = "availability_exceptions"
    __table_args__ = (Index("ix_availability_exceptions_days", "starts_on", "ends_on"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    physio_id: Mapped[str | None] = mapped_column(
        ForeignKey("physiotherapists.id"), nullable=True, index=True
    )
    kind: Mapped[str] = mapped_column(String(16))  # leave | public_holiday
    starts_on: Mapped[date] = mapped_column(Date)
    ends_on: Mapped[date] = mapped_column(Date)  # inclusive
    reason: Mapped[str] = mapped_column(Text)
    created_by: Mapped[str] = mapped_column(String(80))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Appointment(Base):
    """A visit booked into a physiotherapist's slot; statuses in ``care/appointments.py``."""

    __tablename__ = "appointments"
    __table_args__ = (
        Index(
            "uq_appointments_slot",
            "physio_id",
            "starts_at",
            unique=True,
            sqlite_where=text(HOLDS_SLOT),
            postgresql_where=text(HOLDS_SLOT),
        ),
        # At most one upcoming visit per referral: rebooking is a reschedule.
        Index(
            "uq_appointments_referral_booked",
            "referral_id",
            unique=True,
            sqlite_where=text("status = 'booked'"),
            postgresql_where=text("status = 'booked'"),
        ),
        Index("ix_appointments_physio_day", "physio_id", "starts_at"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    referral_id: Mapped[str] = mapped_column(ForeignKey("referrals.id"), index=True)
    physio_id: Mapped[str] = mapped_column(ForeignKey("physiotherapists.id"))
    partner_id: Mapped[str] = mapped_column(ForeignKey("partners.id"))
    environment: Mapped[str] = mapped_column(String(8))
    starts_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    ends_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    care_mode: Mapped[str] = mapped_column(String(16))  # remote | face_to_face
    status: Mapped[str] = mapped_column(String(16))
    # The care session the visit is recorded in (scheduled with the booking).
    session_id: Mapped[str | None] = mapped_column(
        ForeignKey("care_sessions.id"), nullable=True, index=True
    )
    # Why it was cancelled or moved, and (moved) the appointment that replaced it.
    change_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    replaced_by: Mapped[str | None] = mapped_column(String(40), nullable=True)
    # How attendance was established: check_in (the physiotherapist's app) or override.
    attended_via: Mapped[str | None] = mapped_column(String(16), nullable=True)
    attended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_by: Mapped[str] = mapped_column(String(80))
    updated_by: Mapped[str] = mapped_column(String(80))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class SlotOffer(Base):
    """Free slots of the referral's physiotherapist offered to the patient, numbered 1..n
    (``slots``: their UTC starts, ISO 8601, in that order). Statuses in
    ``care/slot_offers.py``; at most one ``open`` offer per referral."""

    __tablename__ = "slot_offers"
    __table_args__ = (
        Index(
            "uq_slot_offers_referral_open",
            "referral_id",
            unique=True,
            sqlite_where=text("status = 'open'"),
            postgresql_where=text("status = 'open'"),
        ),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    referral_id: Mapped[str] = mapped_column(ForeignKey("referrals.id"), index=True)
    physio_id: Mapped[str] = mapped_column(ForeignKey("physiotherapists.id"))
    environment: Mapped[str] = mapped_column(String(8))
    channel: Mapped[str] = mapped_column(String(16))  # whatsapp | sms: where it was sent
    language: Mapped[str] = mapped_column(String(8))
    care_mode: Mapped[str] = mapped_column(String(16))  # remote | face_to_face
    slots: Mapped[list[Any]] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(16))
    appointment_id: Mapped[str | None] = mapped_column(String(40), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    answered_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
