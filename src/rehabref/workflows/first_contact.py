"""The first contact with a new referral's patient, planned with the create.

Who gets what (docs/channels.md): ``preferred_contact: messaging`` starts the WhatsApp
conversation (an approved template: a business may not open with free text); ``sms`` sends
the same greeting with numbered choices and the assistant link (SMS replies drive the same
dialogue); ``email`` sends the greeting and the link. Shape G always starts on WhatsApp.

With live keys and no provider configured for that channel, nobody can be messaged: the
plan opens a coordinator task instead and says so (``dispatched`` false). Test keys never
reach a provider: their message is recorded as sent by the sandbox when it is planned.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.channels.content import CHANNELS, Channel, Content, Reply, Template
from rehabref.channels.outbox import message_row
from rehabref.channels.providers import ChannelProviders
from rehabref.channels.sealing import address_ref
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.errors import ApiError
from rehabref.intake import dialogue
from rehabref.intake.conversation_store import conversation_row
from rehabref.referrals.rows import ReferralRow
from rehabref.referrals.sealing import FIRST_NAME, open_text, patient_identity
from rehabref.referrals.tasks import contact_task
from rehabref.referrals.transitions import lock_referral
from rehabref.tables.channels import OutboundMessage
from rehabref.tables.intake import IntakeConversation
from rehabref.tables.partners import Partner

_messages = table(OutboundMessage)
_conversations = table(IntakeConversation)
_partners = table(Partner)


CHANNEL_OF: dict[str, Channel] = {"messaging": "whatsapp", "sms": "sms", "email": "email"}


async def context_of(
    conn: AsyncConnection, ring: KeyRing, referral: ReferralRow
) -> dialogue.Context:
    """What the assistant knows of a stored referral (the referrer's name is the partner's)."""
    referrer = (
        await conn.execute(select(_partners.c.name).where(_partners.c.id == referral.partner_id))
    ).scalar_one()
    return dialogue_context(
        first_name=open_text(ring, FIRST_NAME, referral.patient_first_name) or "",
        referrer=str(referrer),
        care_mode=referral.care_mode,
        area=referral.patient_area,
        city=referral.patient_city,
    )


def patient_address(
    ring: KeyRing, referral: ReferralRow, channel: str
) -> tuple[Channel, str] | None:
    """Where a message on ``channel`` reaches the patient: the channel and the e-mail address
    or phone on file; None for a web-only conversation or when nothing is on file."""
    if channel not in CHANNELS:
        return None
    person = patient_identity(ring, referral)
    address = person.email if channel == "email" else person.phone
    return (channel, address) if address else None


@dataclass(frozen=True)
class FirstContact:
    messages: list[dict[str, Any]]
    conversations: list[dict[str, Any]]
    contact_tasks: list[dict[str, Any]]

    @property
    def recorded_as_sent(self) -> bool:
        """The message was taken at once (the sandbox's recording provider)."""
        return bool(self.messages) and self.messages[0]["state"] == "sent"


def dialogue_context(
    *,
    first_name: str,
    referrer: str,
    care_mode: str | None,
    area: str | None,
    city: str | None,
) -> dialogue.Context:
    return dialogue.context_for(
        first_name=first_name,
        referrer_name=referrer,
        referral_care_mode=care_mode,
        known_area=area,
        city=city,
    )


def greeting(channel: Channel, context: dialogue.Context, link: str) -> Content:
    template: Template = dialogue.first_contact(context, link=link)
    if channel == "email":  # an e-mail reply is not read: the link is the way in
        return Reply(text=template.text, link=link, subject="Your physiotherapy referral")
    return template  # an SMS says the template's words, numbered choices and the link


def plan_first_contact(
    ring: KeyRing,
    *,
    referral_id: str,
    partner_id: str,
    environment: str,
    preferred_contact: str,
    address: str,
    context: dialogue.Context,
    link: str,
    channels: ChannelProviders,
    now: datetime,
) -> FirstContact:
    channel = CHANNEL_OF[preferred_contact]
    if not channels.reachable(environment, channel):
        task = contact_task(
            referral_id=referral_id,
            partner_id=partner_id,
            environment=environment,
            channel=preferred_contact,
            purpose="no_channel_configured",
            now=now,
        )
        return FirstContact(messages=[], conversations=[], contact_tasks=[task])
    message = message_row(
        ring,
        channel=channel,
        to=address,
        content=greeting(channel, context, link),
        purpose="intake.first_contact",
        environment=environment,
        referral_id=referral_id,
        now=now,
    )
    # Sealed here, so both create paths (and create_store_postgres's one statement) store
    # it sealed.
    conversation = conversation_row(
        ring,
        {
            "referral_id": referral_id,
            "environment": environment,
            "channel": channel,
            "recipient_ref": address_ref(ring, address),
            "state": dialogue.start(context).to_json(),
            "engaged_at": None,
            "last_inbound_at": None,
            "reminded_at": None,
            "nudge_at": now + dialogue.REMINDER_AFTER,  # silence nudged: conversation.py
            "closed_at": None,
            "created_at": now,
            "updated_at": now,
        },
    )
    return FirstContact(
        messages=[channels.planned(message, now)],
        conversations=[conversation],
        contact_tasks=[],
    )


async def send_assistant_link(
    conn: AsyncConnection,
    *,
    referral_id: str,
    link: str,
    channels: ChannelProviders,
    ring: KeyRing,
    now: datetime,
) -> str:
    """A coordinator sends (again) the assistant link on the patient's channel, starting the
    conversation over; the message id. 409 when no provider can reach the patient: saying
    "sent" then would be a lie."""
    referral = await lock_referral(conn, referral_id)
    if referral is None:
        raise ApiError(404, "not_found", "No referral with this identifier.")
    preferred = referral.preferred_contact or "messaging"
    reached = patient_address(ring, referral, CHANNEL_OF[preferred])
    if reached is None or not channels.reachable(referral.environment, reached[0]):
        raise ApiError(
            409,
            "invalid_transition",
            f"The patient cannot be reached by {preferred}: no address on file or no provider "
            "configured. Call them and book directly.",
        )
    first = plan_first_contact(
        ring,
        referral_id=referral.id,
        partner_id=referral.partner_id,
        environment=referral.environment,
        preferred_contact=preferred,
        address=reached[1],
        context=await context_of(conn, ring, referral),
        link=link,
        channels=channels,
        now=now,
    )
    await conn.execute(delete(_conversations).where(_conversations.c.referral_id == referral.id))
    await conn.execute(insert(_conversations), first.conversations)
    await conn.execute(insert(_messages), first.messages)
    return str(first.messages[0]["id"])
