"""Finding one person's referrals by phone or e-mail: the only place that does.

Threat: a data-subject request answered from an incomplete lookup leaves copies behind (an
export that misses a referral, an erasure that keeps one). Every rights flow (export,
erasure, consent withdrawal by STOP) asks this module, so when patient columns become
encrypted the lookup already goes through the keyed blind indexes.

Identifiers are normalised first: phones to E.164 (``e164.check``; ``ValueError`` for an
invalid one), e-mail addresses trimmed and lower-cased. ``identifier_hash`` is what the
request log keeps instead of the value.
"""

from __future__ import annotations

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref import e164
from rehabref.crypto import KeyRing, blind_index
from rehabref.db import table
from rehabref.referrals.rows import ReferralRow
from rehabref.referrals.store import person_conditions
from rehabref.tables.referrals import Referral

_referrals = table(Referral)

EMAIL_MAX = 254


def normalise_phone(phone: str) -> str:
    return e164.check(phone.strip())


def normalise_email(email: str) -> str:
    address = email.strip().lower()
    if not address or "@" not in address or len(address) > EMAIL_MAX:
        raise ValueError("Not an e-mail address.")
    return address


def identifier_hash(ring: KeyRing, kind: str, value: str) -> str:
    """A keyed index of ``value`` (a normalised identifier): what the request log keeps. Keyed,
    because the few hundred million Nigerian mobile numbers are quickly tried against a plain
    hash: an erased person's number must not be recoverable from a database copy."""
    return blind_index(ring, f"request.{kind}", value)


async def referrals_of_person(
    conn: AsyncConnection, ring: KeyRing, *, phone: str | None = None, email: str | None = None
) -> list[ReferralRow]:
    """Every referral (any partner, both environments) whose patient has this normalised
    phone or e-mail address, oldest first, found through the keyed blind indexes (under
    every key of the ring). Neither given: none."""
    matches = person_conditions(ring, phone=phone, email=email)
    if not matches:
        return []
    rows = await conn.execute(select(_referrals).where(or_(*matches)).order_by(_referrals.c.id))
    return list(rows.all())
