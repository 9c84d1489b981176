"""The Referral aggregate: one table behind both request shapes (V1 and G)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, DateTime, ForeignKey, Index, Integer, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from rehabref.db import Base


class Referral(Base):
    __tablename__ = "referrals"
    __table_args__ = (
        # Unique per partner and environment; NULL (Shape G) never collides.
        Index(
            "uq_referrals_external_ref", "partner_id", "environment", "external_ref", unique=True
        ),
        # Shape G: unique per partner and environment (migration 0006); NULLs never collide.
        # Columns that most rows leave NULL are indexed only where set, on PostgreSQL
        # (migration 0009): a V1 create then skips three index insertions.
        Index(
            "ix_referrals_partner_reference",
            "partner_id",
            "environment",
            "partner_reference",
            unique=True,
            postgresql_where=text("partner_reference IS NOT NULL"),
        ),
        Index(
            "ix_referrals_assigned_physio_id",
            "assigned_physio_id",
            postgresql_where=text("assigned_physio_id IS NOT NULL"),
        ),
        Index("ix_referrals_link_id", "link_id", postgresql_where=text("link_id IS NOT NULL")),
        Index("ix_referrals_listing", "partner_id", "environment", "id"),
        Index("ix_referrals_status", "partner_id", "environment", "status", "id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    # No foreign key (migration 0010): its row lock on the partner cost every create.
    partner_id: Mapped[str] = mapped_column(String(40))
    environment: Mapped[str] = mapped_column(String(8))
    shape: Mapped[str] = mapped_column(String(4))  # v1 | g
    status: Mapped[str] = mapped_column(String(24))
    external_ref: Mapped[str | None] = mapped_column(String(255), nullable=True)
    partner_reference: Mapped[str | None] = mapped_column(String(255), nullable=True)
    tracking_code: Mapped[str | None] = mapped_column(String(32), nullable=True, unique=True)

    # Sealed (referrals/sealing.py: ``stored_referral`` writes, ``patient_identity`` reads).
    patient_first_name: Mapped[str] = mapped_column(Text)
    patient_last_name: Mapped[str | None] = mapped_column(Text, nullable=True)
    patient_phone: Mapped[str | None] = mapped_column(Text, nullable=True)
    patient_email: Mapped[str | None] = mapped_column(Text, nullable=True)
    # Keyed blind indexes (crypto.blind_index) of the phone and e-mail: a person's referrals
    # are found by these (referrals.store.unscoped_referral_ids_of_person), never by the values.
    patient_phone_index: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    patient_email_index: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    patient_city: Mapped[str] = mapped_column(String(100))
    patient_area: Mapped[str | None] = mapped_column(String(100), nullable=True)

    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    care_mode: Mapped[str | None] = mapped_column(String(16), nullable=True)
    preferred_contact: Mapped[str | None] = mapped_column(String(16), nullable=True)
    route: Mapped[str | None] = mapped_column(String(16), nullable=True)
    consent_accepted: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    consent_accepted_at: Mapped[datetime | None] = mapped_column(
        DateTime(timezone=True), nullable=True
    )
    consent_version: Mapped[str | None] = mapped_column(String(64), nullable=True)
    consent_source: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # Sealed JSON text (referrals/partner_metadata.py, since migration 0031).
    partner_metadata: Mapped[str | None] = mapped_column(Text, nullable=True)

    # Shape G clinical referral fields.
    diagnosis: Mapped[str | None] = mapped_column(Text, nullable=True)
    recommended_sessions: Mapped[int | None] = mapped_column(Integer, nullable=True)
    priority: Mapped[str | None] = mapped_column(String(16), nullable=True)
    referring_doctor: Mapped[str | None] = mapped_column(String(200), nullable=True)
    billing_mode: Mapped[str | None] = mapped_column(String(32), nullable=True)
    callback_url: Mapped[str | None] = mapped_column(String(2048), nullable=True)

    # Appointment and commercial status, filled in by care coordination.
    appointment_status: Mapped[str | None] = mapped_column(String(16), nullable=True)
    appointment_scheduled_at: Mapped[datetime | None] = mapped_column(
        DateTime(timezone=True), nullable=True
    )
    appointment_care_mode: Mapped[str | None] = mapped_column(String(16), nullable=True)
    payment_currency: Mapped[str | None] = mapped_column(String(3), nullable=True)
    payment_amount_minor: Mapped[int | None] = mapped_column(Integer, nullable=True)
    commission_minor: Mapped[int | None] = mapped_column(Integer, nullable=True)
    commission_status: Mapped[str | None] = mapped_column(String(32), nullable=True)

    # Matching (matching/service.py): the assigned physiotherapist and when.
    assigned_physio_id: Mapped[str | None] = mapped_column(String(40), nullable=True)
    matched_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    # Hosted referral link (links/) that brought this referral, and its campaign.
    link_id: Mapped[str | None] = mapped_column(String(40), nullable=True)
    campaign: Mapped[str | None] = mapped_column(String(100), nullable=True)

    # Patients' rights (workflows/consent.py, workflows/person_data.py, workflows/retention.py).
    consent_withdrawn_at: Mapped[datetime | None] = mapped_column(
        DateTime(timezone=True), nullable=True
    )
    # Personal and clinical fields were scrubbed (erasure request or retention); ids,
    # statuses, dates and amounts stay for billing and audit.
    erased_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ReferralTransition(Base):
    """History of status moves: who, when, why."""

    __tablename__ = "referral_transitions"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    referral_id: Mapped[str] = mapped_column(ForeignKey("referrals.id"), index=True)
    from_status: Mapped[str | None] = mapped_column(String(24), nullable=True)
    to_status: Mapped[str] = mapped_column(String(24))
    actor: Mapped[str] = mapped_column(String(80))
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
