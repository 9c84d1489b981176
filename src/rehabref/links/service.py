"""Referral links: create, list with counts, deactivate, resolve a public code, count a view.

Keyword-only functions on a caller-owned connection; they never commit. Partner calls take
the caller's ``PartnerScope``; the public form finds a link by its code (the credential),
and what follows stays in that link's scope.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Select, func, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref import cursors
from rehabref.clock import as_utc, iso, utcnow
from rehabref.db import table
from rehabref.ids import new_id
from rehabref.links.responses import ReferralLinkRecord
from rehabref.links.rows import LinkColumns, LinkRow, PublicLinkRow
from rehabref.scope import PartnerScope
from rehabref.tables.links import ReferralLink
from rehabref.tables.partners import Partner
from rehabref.tables.referrals import Referral

_links = table(ReferralLink)
_referrals = table(Referral)
_partners = table(Partner)
_CURSOR_ID = re.compile(r"^lnk_[0-9a-z]{26}$")
# Public codes are URL-safe base64: 22 random bytes -> 30 characters (176 bits).
PUBLIC_CODE = re.compile(r"^[A-Za-z0-9_-]{20,64}$")


def new_public_code() -> str:
    return secrets.token_urlsafe(22)


def link_is_open(row: LinkColumns, now: datetime) -> bool:
    """Accepting submissions: not deactivated and not past expires_at."""
    return bool(row.active) and (row.expires_at is None or as_utc(row.expires_at) > now)


def link_url(base_url: str, public_code: str) -> str:
    return f"{base_url}/r/{public_code}"


async def create_link(
    conn: AsyncConnection,
    *,
    scope: PartnerScope,
    campaign: str,
    expires_at: datetime | None,
) -> LinkRow:
    now = utcnow()
    link_id = new_id("lnk")
    await conn.execute(
        insert(_links),
        {
            "id": link_id,
            **scope.columns(),
            "campaign": campaign,
            "public_code": new_public_code(),
            "active": True,
            "expires_at": expires_at,
            "click_count": 0,
            "created_at": now,
            "deactivated_at": None,
        },
    )
    row = await get_link(conn, scope=scope, link_id=link_id)
    assert row is not None
    return row


def _with_counts(scope: PartnerScope) -> Select[Any]:
    referral_count = (
        scope.select(_referrals, func.count())
        .where(_referrals.c.link_id == _links.c.id)
        .scalar_subquery()
        .label("referral_count")
    )
    return scope.select(_links, _links, referral_count)


async def get_link(conn: AsyncConnection, *, scope: PartnerScope, link_id: str) -> LinkRow | None:
    query = _with_counts(scope).where(_links.c.id == link_id)
    row: LinkRow | None = (await conn.execute(query)).first()
    return row


async def list_links(
    conn: AsyncConnection,
    *,
    scope: PartnerScope,
    before_id: str | None,
    limit: int,
) -> tuple[Sequence[LinkRow], bool]:
    """Newest first, keyset on the time-ordered id. Returns (rows, has_more)."""
    query = _with_counts(scope)
    if before_id is not None:
        query = query.where(_links.c.id < before_id)
    rows = (await conn.execute(query.order_by(_links.c.id.desc()).limit(limit + 1))).all()
    return list(rows[:limit]), len(rows) > limit


async def deactivate_link(
    conn: AsyncConnection, *, scope: PartnerScope, link_id: str
) -> LinkRow | None:
    """Idempotent: a second call leaves the first deactivation time in place."""
    await conn.execute(
        scope.update(_links)
        .where(_links.c.id == link_id, _links.c.active.is_(True))
        .values(active=False, deactivated_at=utcnow())
    )
    return await get_link(conn, scope=scope, link_id=link_id)


async def unscoped_by_public_code(conn: AsyncConnection, public_code: str) -> PublicLinkRow | None:
    """Any partner's link by its public code (any state), with the partner's name: the code
    is the credential of the public form."""
    if not PUBLIC_CODE.match(public_code):
        return None
    query = (
        select(_links, _partners.c.name.label("partner_name"))
        .join(_partners, _partners.c.id == _links.c.partner_id)
        .where(_links.c.public_code == public_code)
    )
    return (await conn.execute(query)).first()


async def count_click(conn: AsyncConnection, *, link: PublicLinkRow) -> None:
    await conn.execute(
        PartnerScope.owning(link)
        .update(_links)
        .where(_links.c.id == link.id)
        .values(click_count=_links.c.click_count + 1)
    )


def record(row: LinkRow, base_url: str) -> ReferralLinkRecord:
    return ReferralLinkRecord(
        link_id=row.id,
        public_code=row.public_code,
        url=link_url(base_url, row.public_code),
        campaign=row.campaign,
        active=link_is_open(row, utcnow()),
        expires_at=iso(as_utc(row.expires_at)) if row.expires_at else None,
        created_at=iso(as_utc(row.created_at)),
        deactivated_at=iso(as_utc(row.deactivated_at)) if row.deactivated_at else None,
        clicks=int(row.click_count),
        referrals=int(row.referral_count),
    )


def encode_cursor(last_id: str) -> str:
    return cursors.encode_cursor(last_id)


def decode_cursor(cursor: str) -> str | None:
    return cursors.decode_cursor(cursor, _CURSOR_ID)
