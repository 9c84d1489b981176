"""Patient messages: the outbox of outbound messages, inbound messages, and opt-outs."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, DateTime, Index, Integer, String, Text, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from rehabref.db import Base


class OutboundMessage(Base):
    """One message to a patient, written in the business transaction, sent by the worker."""

    __tablename__ = "outbound_messages"
    __table_args__ = (
        # Only messages still owed are claimed and ordered, and only providers' ids are
        # looked up: on PostgreSQL these indexes skip the rest (a sandbox message, recorded
        # as sent when planned, costs a create no entry in them).
        Index(
            "ix_outbound_messages_due",
            "state",
            "next_attempt_at",
            postgresql_where=text("state IN ('pending', 'sending')"),
        ),
        Index(
            "ix_outbound_messages_recipient",
            "recipient_ref",
            "state",
            "id",
            postgresql_where=text("state IN ('pending', 'sending')"),
        ),
        Index(
            "ix_outbound_messages_provider_id",
            "provider_message_id",
            postgresql_where=text("provider_message_id IS NOT NULL"),
        ),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    referral_id: Mapped[str | None] = mapped_column(String(40), nullable=True, index=True)
    environment: Mapped[str] = mapped_column(String(8))
    channel: Mapped[str] = mapped_column(String(16))  # whatsapp | sms | email
    # E.164 phone or e-mail address, sealed (channels/sealing.py).
    recipient: Mapped[str] = mapped_column(Text)
    # The recipient's keyed blind index (channels.sealing.address_ref): order, opt-outs
    # and logs use this.
    recipient_ref: Mapped[str] = mapped_column(String(64))
    purpose: Mapped[str] = mapped_column(String(40))  # intake.first_contact | ...
    # channels.content.to_json() as JSON text, sealed.
    content: Mapped[str] = mapped_column(Text)
    # pending | sending | sent | delivered | read | failed | suppressed | cancelled
    state: Mapped[str] = mapped_column(String(16))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    claimed_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    provider: Mapped[str | None] = mapped_column(String(16), nullable=True)
    provider_message_id: Mapped[str | None] = mapped_column(String(120), nullable=True)
    # Safe to show a coordinator: a provider code and a few words, never the recipient.
    last_error: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    sent_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    status_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class InboundMessage(Base):
    """A patient's message as the provider delivered it; processed once, after the webhook
    was acknowledged."""

    __tablename__ = "inbound_messages"
    __table_args__ = (UniqueConstraint("provider", "provider_message_id"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    provider: Mapped[str] = mapped_column(String(16))
    provider_message_id: Mapped[str] = mapped_column(String(120))
    channel: Mapped[str] = mapped_column(String(16))
    # Sender, text and choice are sealed (channels/sealing.py); sender_ref is the sender's
    # blind index, as recipient_ref.
    sender: Mapped[str] = mapped_column(Text)
    sender_ref: Mapped[str] = mapped_column(String(64), index=True)
    text: Mapped[str | None] = mapped_column(Text, nullable=True)
    choice_id: Mapped[str | None] = mapped_column(Text, nullable=True)
    # The provider id of our message this one replies to, when the provider says.
    context_id: Mapped[str | None] = mapped_column(String(120), nullable=True)
    referral_id: Mapped[str | None] = mapped_column(String(40), nullable=True, index=True)
    received_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    processed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class MessageOptOut(Base):
    """A number that said STOP: no automated message reaches it, on any referral, until it
    says START (consent withdrawal for messaging, kept with time and channel)."""

    __tablename__ = "message_opt_outs"

    # The number's blind index (channels.sealing.address_ref).
    recipient_ref: Mapped[str] = mapped_column(String(64), primary_key=True)
    opted_out: Mapped[bool] = mapped_column(default=True)
    channel: Mapped[str] = mapped_column(String(16))
    opted_out_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    opted_in_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # Every STOP and START: [{"action", "channel", "at"}], oldest first.
    history: Mapped[list[dict[str, str]]] = mapped_column(JSON)
