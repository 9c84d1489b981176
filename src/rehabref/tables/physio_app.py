"""The physiotherapist app's credentials: one-time sign-in links, sessions, calendar feeds.

Only SHA-256 digests of the secrets are stored: a copy of the database signs nobody in.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from rehabref.db import Base


class PhysioSignInLink(Base):
    """A one-time sign-in link sent to the physiotherapist's phone or e-mail."""

    __tablename__ = "physio_sign_in_links"

    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    physio_id: Mapped[str] = mapped_column(ForeignKey("physiotherapists.id"), index=True)
    channel: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class PhysioAppSession(Base):
    """A signed-in device; ended by expiry, sign-out, or sign-out everywhere."""

    __tablename__ = "physio_app_sessions"

    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    physio_id: Mapped[str] = mapped_column(ForeignKey("physiotherapists.id"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class CalendarFeed(Base):
    """A physiotherapist's secret iCalendar feed URL; revoking it ends the URL."""

    __tablename__ = "calendar_feeds"

    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    physio_id: Mapped[str] = mapped_column(ForeignKey("physiotherapists.id"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
