"""Operators (coordinators and admins), their API tokens and their console sessions."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, String
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
    # coordinator | admin (``ops.roles``): admins also read the audit trail.
    role: Mapped[str] = mapped_column(String(20), server_default="coordinator")
    # The token stops working at this moment (null: no expiry).
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # The TOTP secret (base32, sealed with the instance secret) once enrolled
    # (``rehabref operators enrol-totp``): console sign-in then also asks for the code.
    totp_secret: Mapped[str | None] = mapped_column(String(255), nullable=True)


class ConsoleSession(Base):
    """One signed-in console browser: its last request, for the idle sign-out."""

    __tablename__ = "console_sessions"

    # The session cookie's nonce.
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    operator_id: Mapped[str] = mapped_column(String(40), ForeignKey("operators.id"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_seen_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
