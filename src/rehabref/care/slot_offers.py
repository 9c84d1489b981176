"""Slot offers in the database: the free slots shown to a patient, numbered as shown.

Threat: a patient's "2" booking something other than the second time they read, or an old
or expired offer booking anything. The offered starts are stored in the order shown, the
reply is read against that row only, and an offer is answered once: statuses ::

    open -> booked | taken | declined | unclear | expired | superseded

(``taken``: the chosen slot was given to someone else meanwhile, a fresh offer follows;
``superseded``: the referral was booked or ended another way). The partial unique index
``uq_slot_offers_referral_open`` keeps at most one open offer per referral. Services never
commit.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.care.availability import Slot
from rehabref.care.rows import SlotOfferRow
from rehabref.clock import as_utc, iso
from rehabref.db import table
from rehabref.ids import new_id
from rehabref.tables.scheduling import SlotOffer

offers = table(SlotOffer)
ANSWERED = frozenset({"booked", "taken", "declined", "unclear", "expired", "superseded"})


async def create(
    conn: AsyncConnection,
    *,
    referral_id: str,
    physio_id: str,
    environment: str,
    channel: str,
    language: str,
    care_mode: str,
    slots: Sequence[Slot],
    expires_at: datetime,
    now: datetime,
) -> str:
    offer_id = new_id("sof")
    await conn.execute(
        insert(offers),
        {
            "id": offer_id,
            "referral_id": referral_id,
            "physio_id": physio_id,
            "environment": environment,
            "channel": channel,
            "language": language,
            "care_mode": care_mode,
            "slots": [iso(slot.starts_at) for slot in slots],
            "status": "open",
            "appointment_id": None,
            "created_at": now,
            "expires_at": expires_at,
            "answered_at": None,
        },
    )
    return offer_id


def starts_of(offer: SlotOfferRow) -> tuple[datetime, ...]:
    """The offered slot starts, in the order they were numbered (1 first)."""
    return tuple(as_utc(datetime.fromisoformat(str(value))) for value in offer.slots)


async def get(conn: AsyncConnection, offer_id: str, *, lock: bool = True) -> SlotOfferRow | None:
    """One offer, locked on PostgreSQL unless ``lock`` is False (lock the referral first)."""
    query = select(offers).where(offers.c.id == offer_id)
    if lock and conn.dialect.name == "postgresql":
        query = query.with_for_update()
    return (await conn.execute(query)).first()


async def open_for_referral(conn: AsyncConnection, referral_id: str) -> SlotOfferRow | None:
    """The referral's open offer, locked on PostgreSQL (lock the referral first)."""
    query = select(offers).where(offers.c.referral_id == referral_id, offers.c.status == "open")
    if conn.dialect.name == "postgresql":
        query = query.with_for_update()
    return (await conn.execute(query)).first()


async def for_referral(conn: AsyncConnection, referral_id: str) -> list[SlotOfferRow]:
    query = (
        select(offers)
        .where(offers.c.referral_id == referral_id)
        .order_by(offers.c.created_at, offers.c.id)
    )
    return list((await conn.execute(query)).all())


async def settle(
    conn: AsyncConnection,
    *,
    offer_id: str,
    status: str,
    now: datetime,
) -> bool:
    """An open offer is answered (or ends); False when it was not open any more."""
    if status not in ANSWERED:
        raise ValueError(f"not an answered offer status: {status}")
    result = await conn.execute(
        update(offers)
        .where(offers.c.id == offer_id, offers.c.status == "open")
        .values(status=status, answered_at=now)
    )
    return bool(result.rowcount)


async def attach_appointment(conn: AsyncConnection, *, offer_id: str, appointment_id: str) -> None:
    await conn.execute(
        update(offers).where(offers.c.id == offer_id).values(appointment_id=appointment_id)
    )


async def supersede_open(conn: AsyncConnection, *, referral_id: str, now: datetime) -> None:
    """The referral was booked or ended another way: its open offer books nothing now."""
    await conn.execute(
        update(offers)
        .where(offers.c.referral_id == referral_id, offers.c.status == "open")
        .values(status="superseded", answered_at=now)
    )
