"""Who a referral was given to and why: one row per match or coordinator (re)assignment.

``referrals.assigned_physio_id`` says who has the referral now; this table says how each
physiotherapist got it: ``automatic`` (the matching rules' facts in ``basis``, no clinical
text) or ``manual`` (the coordinator's reason, sealed at rest like clinical text because a
coordinator may write why in clinical terms).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from rehabref.db import Base


class PhysioAssignment(Base):
    __tablename__ = "physio_assignments"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    referral_id: Mapped[str] = mapped_column(ForeignKey("referrals.id"), index=True)
    physio_id: Mapped[str] = mapped_column(ForeignKey("physiotherapists.id"))
    previous_physio_id: Mapped[str | None] = mapped_column(String(40), nullable=True)
    kind: Mapped[str] = mapped_column(String(16))  # automatic | manual
    # automatic: {"specialization": "exact"|"related"|"general"|"none", "area": bool | None,
    # "rating": float, "free_places": int, "weekly_capacity": int}; manual: {}.
    basis: Mapped[dict[str, Any]] = mapped_column(JSON)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)  # sealed (manual only)
    actor: Mapped[str] = mapped_column(String(80))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
