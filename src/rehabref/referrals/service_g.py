"""Shape G referrals: tracking codes, and lookup by any of the three keys (id, tracking code,
partner_reference). Creating one is ``workflows/referral_created_g.py``."""

from __future__ import annotations

import re
import secrets
from typing import Any

from sqlalchemy import Row, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.db import table
from rehabref.principal import Principal
from rehabref.referrals import service
from rehabref.result_rows import RowLike
from rehabref.tables.referrals import Referral

_referrals = table(Referral)

# 12 symbols from a 31-letter alphabet without look-alikes (0/O, 1/I/L): about 59 bits.
_TRACKING_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
TRACKING_LENGTH = 12
TRACKING_PREFIX = "RR"
_TRACKING = re.compile(rf"^{TRACKING_PREFIX}[{_TRACKING_ALPHABET}]{{{TRACKING_LENGTH}}}$")
_REFERRAL_ID = re.compile(r"^ref_[0-9a-z]{26}$")


def new_tracking_code() -> str:
    body = "".join(secrets.choice(_TRACKING_ALPHABET) for _ in range(TRACKING_LENGTH))
    return TRACKING_PREFIX + body


def normalise_tracking_code(value: str) -> str | None:
    candidate = value.strip().upper()
    return candidate if _TRACKING.match(candidate) else None


def tracking_url(base_url: str, code: str) -> str:
    return f"{base_url}/track/{code}"


async def find_by_partner_reference(
    conn: AsyncConnection, *, principal: Principal, partner_reference: str
) -> Row[Any] | None:
    return (
        await conn.execute(
            select(_referrals.c.id).where(
                _referrals.c.partner_id == principal.partner_id,
                _referrals.c.environment == principal.environment,
                _referrals.c.partner_reference == partner_reference,
            )
        )
    ).first()


def is_referral_id(key: str) -> bool:
    return bool(_REFERRAL_ID.match(key))


async def resolve(conn: AsyncConnection, *, principal: Principal, key: str) -> RowLike | None:
    """One referral by internal id, tracking code or partner_reference, in that order."""
    if not key or len(key) > 255:
        return None
    if _REFERRAL_ID.match(key):
        # The common case, and the id takes precedence anyway: one indexed lookup.
        by_id = await service.get_referral(conn, principal=principal, referral_id=key)
        if by_id is not None:
            return by_id
    tracking = normalise_tracking_code(key)
    conditions = [_referrals.c.partner_reference == key]
    if tracking is not None:
        conditions.append(_referrals.c.tracking_code == tracking)
    rows = (
        await conn.execute(
            select(_referrals).where(
                _referrals.c.partner_id == principal.partner_id,
                _referrals.c.environment == principal.environment,
                or_(*conditions),
            )
        )
    ).all()
    by_code = [row for row in rows if tracking is not None and row.tracking_code == tracking]
    by_reference = [row for row in rows if row.partner_reference == key]
    for found in (by_code, by_reference):
        if found:
            return found[0]
    return None
