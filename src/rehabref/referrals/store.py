"""The referral store: every read of the Referral aggregate, each inside a tenant scope.

Partner-facing functions take a ``PartnerScope`` (never bare partner ids) and build their
statements from it; the one read across tenants, by a public tracking code, says so in its
name (``unscoped_``). Statements are compiled once (``fastsql``) and run on whichever
connection the caller holds, a raw pooled one for the API's retrieve and list. Creating a
referral is ``workflows/referral_created*.py``; moving one is ``referrals/transitions.py``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref import cursors
from rehabref.crypto import KeyRing, blind_index, blind_indexes
from rehabref.db import table
from rehabref.fastsql import Connection, Statement, fetch_all, fetch_one
from rehabref.referrals.rows import ReferralRow
from rehabref.referrals.tracking import normalise_tracking_code
from rehabref.scope import PartnerScope, in_scope
from rehabref.tables.referrals import Referral

_referrals = table(Referral)

REFERRAL_ID = re.compile(r"^ref_[0-9a-z]{26}$")

_scoped = select(_referrals).where(*in_scope(_referrals))
_BY_ID = Statement(_scoped.where(_referrals.c.id == bindparam("id")))
_BY_EXTERNAL_REF = Statement(_scoped.where(_referrals.c.external_ref == bindparam("external_ref")))
_BY_PARTNER_REFERENCE = Statement(
    select(_referrals.c.id).where(
        *in_scope(_referrals), _referrals.c.partner_reference == bindparam("partner_reference")
    )
)
# A Shape G key that is not an id: the partner_reference, or (when it has the form of one)
# the tracking code; ``tracking`` is bound to NULL otherwise, which matches nothing.
_BY_G_KEY = Statement(
    _scoped.where(
        or_(
            _referrals.c.partner_reference == bindparam("key"),
            _referrals.c.tracking_code == bindparam("tracking"),
        )
    )
)
_BY_ID_ANY_PARTNER = Statement(select(_referrals).where(_referrals.c.id == bindparam("id")))
_BY_TRACKING_CODE = Statement(
    select(_referrals).where(_referrals.c.tracking_code == bindparam("tracking"))
)


def is_referral_id(key: str) -> bool:
    return bool(REFERRAL_ID.match(key))


async def get_referral(
    conn: Connection, *, scope: PartnerScope, referral_id: str
) -> ReferralRow | None:
    return await fetch_one(conn, _BY_ID, scope.bind(id=referral_id))


async def find_by_external_ref(
    conn: Connection, *, scope: PartnerScope, external_ref: str
) -> ReferralRow | None:
    return await fetch_one(conn, _BY_EXTERNAL_REF, scope.bind(external_ref=external_ref))


async def find_id_by_partner_reference(
    conn: Connection, *, scope: PartnerScope, partner_reference: str
) -> str | None:
    found = await fetch_one(
        conn, _BY_PARTNER_REFERENCE, scope.bind(partner_reference=partner_reference)
    )
    return None if found is None else str(found.id)


async def find_by_key(conn: Connection, *, scope: PartnerScope, key: str) -> ReferralRow | None:
    """One referral by internal id, tracking code or partner_reference, in that order."""
    if not key or len(key) > 255:
        return None
    if REFERRAL_ID.match(key):
        # The common case, and the id takes precedence anyway: one indexed lookup.
        by_id = await get_referral(conn, scope=scope, referral_id=key)
        if by_id is not None:
            return by_id
    tracking = normalise_tracking_code(key)
    rows = await fetch_all(conn, _BY_G_KEY, scope.bind(key=key, tracking=tracking))
    by_code = [row for row in rows if tracking is not None and row.tracking_code == tracking]
    by_reference = [row for row in rows if row.partner_reference == key]
    for found in (by_code, by_reference):
        if found:
            return found[0]
    return None


async def unscoped_by_tracking_code(conn: Connection, *, tracking_code: str) -> ReferralRow | None:
    """Any partner's referral by its tracking code: the code itself is the credential (the
    public tracking page). What is shown from it is that page's business."""
    tracking = normalise_tracking_code(tracking_code)
    if tracking is None:
        return None
    return await fetch_one(conn, _BY_TRACKING_CODE, {"tracking": tracking})


async def unscoped_get_referral(conn: Connection, *, referral_id: str) -> ReferralRow | None:
    """Any partner's referral by id, for a caller that holds a credential for exactly that
    referral (a signed report link) rather than a partner key."""
    return await fetch_one(conn, _BY_ID_ANY_PARTNER, {"id": referral_id})


def encode_cursor(last_id: str) -> str:
    return cursors.encode_cursor(last_id)


def decode_cursor(cursor: str) -> str | None:
    return cursors.decode_cursor(cursor, REFERRAL_ID)


_list_statements: dict[tuple[bool, ...], Statement] = {}


def _list_statement(filters: tuple[bool, bool, bool, bool]) -> Statement:
    """One prepared statement per combination of filters (generic plans stay good)."""
    found = _list_statements.get(filters)
    if found is None:
        has_status, has_from, has_to, has_cursor = filters
        query = _scoped
        if has_status:
            query = query.where(_referrals.c.status == bindparam("status"))
        if has_from:
            query = query.where(_referrals.c.created_at >= bindparam("created_from"))
        if has_to:
            query = query.where(_referrals.c.created_at < bindparam("created_to"))
        if has_cursor:
            query = query.where(_referrals.c.id < bindparam("before_id"))
        query = query.order_by(_referrals.c.id.desc()).limit(bindparam("page_size"))
        found = _list_statements[filters] = Statement(query)
    return found


async def list_referrals(
    conn: Connection,
    *,
    scope: PartnerScope,
    status: str | None,
    created_from: datetime | None,
    created_to: datetime | None,
    before_id: str | None,
    limit: int,
) -> tuple[Sequence[ReferralRow], bool]:
    """Newest first; keyset on the time-ordered id. Returns (rows, has_more)."""
    optional = {
        "status": status,
        "created_from": created_from,
        "created_to": created_to,
        "before_id": before_id,
    }
    params: dict[str, Any] = scope.bind(page_size=limit + 1)
    params.update({name: value for name, value in optional.items() if value is not None})
    statement = _list_statement(
        (
            status is not None,
            created_from is not None,
            created_to is not None,
            before_id is not None,
        )
    )
    rows = await fetch_all(conn, statement, params)
    return rows[:limit], len(rows) > limit


PHONE_INDEX = "phone"
EMAIL_INDEX = "email"


def with_person_indexes(ring: KeyRing, referral: dict[str, Any]) -> dict[str, Any]:
    """A new referral row with the blind indexes of its patient's phone and e-mail, under the
    ring's current key: what every writer of a referral stores."""
    phone = referral.get("patient_phone")
    email = referral.get("patient_email")
    return {
        **referral,
        "patient_phone_index": blind_index(ring, PHONE_INDEX, phone) if phone else None,
        "patient_email_index": blind_index(ring, EMAIL_INDEX, email) if email else None,
    }


def person_conditions(ring: KeyRing, *, phone: str | None, email: str | None) -> list[Any]:
    """WHERE conditions matching a person's referrals through the blind indexes (under every
    key of the ring: rows written before a rotation carry an older key's index)."""
    conditions: list[Any] = []
    if phone:
        conditions.append(
            _referrals.c.patient_phone_index.in_(blind_indexes(ring, PHONE_INDEX, phone))
        )
    if email:
        conditions.append(
            _referrals.c.patient_email_index.in_(blind_indexes(ring, EMAIL_INDEX, email))
        )
    return conditions


async def unscoped_referral_ids_of_person(
    conn: AsyncConnection, ring: KeyRing, *, phone: str | None = None, email: str | None = None
) -> list[str]:
    """Every referral (any partner, any environment) whose patient has this phone (E.164) or
    this e-mail address, oldest first; found through the keyed blind indexes, so the lookup
    needs the key ring and the database never compares the values themselves. For
    data-subject requests (export, erasure, consent withdrawal): across every tenant, so the
    caller is an operator or the CLI, never a partner key."""
    conditions = person_conditions(ring, phone=phone, email=email)
    if not conditions:
        return []
    rows = await conn.execute(
        select(_referrals.c.id).where(or_(*conditions)).order_by(_referrals.c.id)
    )
    return [str(row.id) for row in rows]
