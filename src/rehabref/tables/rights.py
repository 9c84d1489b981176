"""Data-subject requests (NDPA): who asked for what about whom, and what it touched.

The person is kept only as a plain SHA-256 of the normalised identifier
(``referrals.person.identifier_hash``): the request log proves a request was answered without
becoming one more copy of the phone number or address it was about.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, String
from sqlalchemy.orm import Mapped, mapped_column

from rehabref.db import Base


class DataSubjectRequest(Base):
    __tablename__ = "data_subject_requests"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))  # export | erasure | withdrawal
    # SHA-256 hex of "phone:<E.164>" and/or "email:<lower-case address>", never the value.
    phone_hash: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)
    email_hash: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)
    actor: Mapped[str] = mapped_column(String(80))  # operator:<id> | cli | patient:<channel>
    # Rows found or changed per table, e.g. {"referrals": 2, "outbound_messages": 5}.
    result: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
