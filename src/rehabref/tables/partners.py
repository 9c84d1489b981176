"""Partner, API key and webhook secret tables."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, DateTime, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from rehabref.db import Base


class Partner(Base):
    __tablename__ = "partners"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    contract: Mapped[str] = mapped_column(String(8))  # v1 | g
    commission_bps: Mapped[int | None] = mapped_column(Integer, nullable=True)
    commission_fixed_minor: Mapped[int | None] = mapped_column(Integer, nullable=True)
    show_payments: Mapped[bool] = mapped_column(Boolean, default=False)
    # Where the partner is told about its integration (e.g. a disabled webhook endpoint).
    contact_email: Mapped[str | None] = mapped_column(String(254), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ApiKey(Base):
    """A partner credential. Only the SHA-256 of the key is stored; the key is shown once."""

    __tablename__ = "api_keys"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    partner_id: Mapped[str] = mapped_column(ForeignKey("partners.id"), index=True)
    environment: Mapped[str] = mapped_column(String(8))  # test | live
    kind: Mapped[str] = mapped_column(String(8))  # secret | public
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # First characters of the key, enough for an operator to tell keys apart.
    display_prefix: Mapped[str] = mapped_column(String(24))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class WebhookSecret(Base):
    """Signing secret per partner and environment, sealed with the instance key.

    It must be recoverable to sign deliveries, so it is encrypted rather than hashed.
    During rotation two secrets are active; the older one has ``expires_at`` set.
    """

    __tablename__ = "webhook_secrets"
    __table_args__ = (Index("ix_webhook_secrets_partner_env", "partner_id", "environment"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    partner_id: Mapped[str] = mapped_column(ForeignKey("partners.id"))
    environment: Mapped[str] = mapped_column(String(8))
    sealed_secret: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
