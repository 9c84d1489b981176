"""Operators (coordinators) and their API tokens."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, String
from sqlalchemy.orm import Mapped, mapped_column

from rehabref.db import Base


class Operator(Base):
    __tablename__ = "operators"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    # SHA-256 of the token; the token itself is shown once by `rehabref operators create`.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # Console sessions issued before this moment are over (set by signing out): a copied
    # session cookie stops working when its operator signs out anywhere.
    console_sessions_after: Mapped[datetime | None] = mapped_column(
        DateTime(timezone=True), nullable=True
    )
