"""Referral lookups, scoped to the calling partner and environment. Keyword-only functions on a
caller-owned connection; creating a referral is ``workflows/referral_created.py``."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, insert, select

from rehabref import cursors
from rehabref.db import table
from rehabref.fastsql import (
    Connection,
    Statement,
    fetch_all,
    fetch_one,
)
from rehabref.principal import Principal
from rehabref.result_rows import Record
from rehabref.tables.referrals import Referral, ReferralTransition

_referrals = table(Referral)
_transitions = table(ReferralTransition)
_INSERT_REFERRAL = Statement(insert(_referrals))
_INSERT_TRANSITIONS = Statement(insert(_transitions))

_CURSOR_ID = re.compile(r"^ref_[0-9a-z]{26}$")


_in_scope = (
    _referrals.c.partner_id == bindparam("partner_id"),
    _referrals.c.environment == bindparam("environment"),
)
_BY_ID = Statement(select(_referrals).where(*_in_scope, _referrals.c.id == bindparam("id")))
_BY_EXTERNAL_REF = Statement(
    select(_referrals).where(*_in_scope, _referrals.c.external_ref == bindparam("external_ref"))
)


def _scope(principal: Principal) -> dict[str, Any]:
    return {"partner_id": principal.partner_id, "environment": principal.environment}


async def get_referral(
    conn: Connection, *, principal: Principal, referral_id: str
) -> Record | None:
    return await fetch_one(conn, _BY_ID, {**_scope(principal), "id": referral_id})


async def find_by_external_ref(
    conn: Connection, *, principal: Principal, external_ref: str
) -> Record | None:
    return await fetch_one(
        conn, _BY_EXTERNAL_REF, {**_scope(principal), "external_ref": external_ref}
    )


def encode_cursor(last_id: str) -> str:
    return cursors.encode_cursor(last_id)


def decode_cursor(cursor: str) -> str | None:
    return cursors.decode_cursor(cursor, _CURSOR_ID)


_list_statements: dict[tuple[bool, ...], Statement] = {}


def _list_statement(filters: tuple[bool, bool, bool, bool]) -> Statement:
    """One prepared statement per combination of filters (generic plans stay good)."""
    found = _list_statements.get(filters)
    if found is None:
        has_status, has_from, has_to, has_cursor = filters
        query = select(_referrals).where(*_in_scope)
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
    principal: Principal,
    status: str | None,
    created_from: datetime | None,
    created_to: datetime | None,
    before_id: str | None,
    limit: int,
) -> tuple[list[Record], bool]:
    """Newest first; keyset on the time-ordered id. Returns (rows, has_more)."""
    params: dict[str, Any] = {**_scope(principal), "page_size": limit + 1}
    optional = {
        "status": status,
        "created_from": created_from,
        "created_to": created_to,
        "before_id": before_id,
    }
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
