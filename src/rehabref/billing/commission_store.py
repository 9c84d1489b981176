"""Commission statements in the database: generate (idempotent per partner, environment and
month), settle (once), and the partner's scoped reads.

Threat: commission paid twice or to the wrong partner. A statement is unique per partner,
environment and month and a referral is on at most one line (unique keys, so concurrent
generates agree); settling is a conditional update from ``pending_settlement`` (of two
concurrent settles exactly one changes the row, the other gets 409); partner reads are built
from a ``PartnerScope``. Nothing here commits: the caller's ``db.write()`` does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref import cursors
from rehabref.billing.statement_responses import StatementDetail, StatementLine, StatementRecord
from rehabref.billing.statements import (
    STATEMENT_CURRENCY,
    PaidReferral,
    build_statement,
    period_bounds,
    period_is_over,
)
from rehabref.clock import iso
from rehabref.crypto import KeyRing
from rehabref.db import insert_ignoring_duplicates, table
from rehabref.errors import ApiError
from rehabref.events.outbox import NewEvent, record_events
from rehabref.ids import new_id
from rehabref.referrals.commission import PENDING_SETTLEMENT
from rehabref.scope import OperatorScope, PartnerScope
from rehabref.tables.commission import CommissionStatement, CommissionStatementLine
from rehabref.tables.partners import Partner
from rehabref.tables.referrals import Referral, ReferralTransition

SETTLED = "settled"
SETTLED_EVENT = "commission.settled"

_statements = table(CommissionStatement)
_lines = table(CommissionStatementLine)
_partners = table(Partner)
_referrals = table(Referral)
_transitions = table(ReferralTransition)
_CURSOR_ID = re.compile(r"^cst_[0-9a-z]{26}$")


def _one_partner(partner_id: str, environment: str) -> OperatorScope:
    """A coordinator's statement work, narrowed to one partner and environment (both set)."""
    return OperatorScope(partner_id=partner_id, environment=environment)


def has_commission(bps: int | None, fixed_minor: int | None) -> bool:
    """The agreement grants commission (the same test as referrals/commission.record_for)."""
    return bool(bps and bps > 0) or bool(fixed_minor and fixed_minor > 0)


async def _paid_in_period(
    conn: AsyncConnection, *, partner_id: str, environment: str, period: str
) -> list[PaidReferral]:
    start, end = period_bounds(period)
    paid_at = (
        select(
            _transitions.c.referral_id,
            func.min(_transitions.c.created_at).label("paid_at"),
        )
        .where(_transitions.c.to_status == "paid")
        .group_by(_transitions.c.referral_id)
        .subquery()
    )
    on_a_statement = select(_lines.c.id).where(_lines.c.referral_id == _referrals.c.id).exists()
    rows = (
        await conn.execute(
            select(
                _referrals.c.id,
                paid_at.c.paid_at,
                _referrals.c.payment_currency,
                _referrals.c.payment_amount_minor,
                _referrals.c.commission_minor,
            )
            .join(paid_at, paid_at.c.referral_id == _referrals.c.id)
            .where(
                *_one_partner(partner_id, environment).where(_referrals),
                _referrals.c.commission_status == PENDING_SETTLEMENT,
                paid_at.c.paid_at >= start,
                paid_at.c.paid_at < end,
                ~on_a_statement,
            )
        )
    ).all()
    return [
        PaidReferral(
            referral_id=row.id,
            paid_at=row.paid_at,
            currency=row.payment_currency or "",
            amount_minor=row.payment_amount_minor or 0,
            commission_minor=row.commission_minor or 0,
        )
        for row in rows
    ]


async def generate(
    conn: AsyncConnection,
    *,
    partner_id: str,
    environment: str,
    period: str,
    actor: str,
    now: datetime,
) -> tuple[Any, bool]:
    """(statement, created). A repeat for the same partner, environment and month returns the
    statement made first. 404 unknown partner; 409 a month not yet over, or an agreement
    without commission."""
    partner = (
        await conn.execute(
            select(_partners.c.commission_bps, _partners.c.commission_fixed_minor).where(
                _partners.c.id == partner_id
            )
        )
    ).first()
    if partner is None:
        raise ApiError(404, "not_found", "No partner with this identifier.")
    existing = await _by_period(conn, partner_id, environment, period)
    if existing is not None:
        return existing, False
    if not period_is_over(period, now):
        raise ApiError(409, "period_not_over", "A statement is made once its month has ended.")
    if not has_commission(partner.commission_bps, partner.commission_fixed_minor):
        raise ApiError(409, "no_commission", "This partner's agreement has no commission.")
    draft = build_statement(
        await _paid_in_period(conn, partner_id=partner_id, environment=environment, period=period),
        currency=STATEMENT_CURRENCY,
    )
    statement_id = new_id("cst")
    inserted = await insert_ignoring_duplicates(
        conn,
        _statements,
        {
            "id": statement_id,
            "partner_id": partner_id,
            "environment": environment,
            "period": period,
            "currency": draft.currency,
            "status": PENDING_SETTLEMENT,
            "line_count": len(draft.lines),
            "amount_total_minor": draft.amount_total_minor,
            "commission_total_minor": draft.commission_total_minor,
            "created_by": actor,
            "created_at": now,
            "settled_by": None,
            "settled_at": None,
        },
    )
    if inserted and draft.lines:
        await conn.execute(
            insert(_lines),
            [
                {
                    "id": new_id("csl"),
                    "statement_id": statement_id,
                    "referral_id": line.referral_id,
                    "paid_at": line.paid_at,
                    "currency": line.currency,
                    "amount_minor": line.amount_minor,
                    "commission_minor": line.commission_minor,
                }
                for line in draft.lines
            ],
        )
    row = await _by_period(conn, partner_id, environment, period)
    return row, inserted


async def _by_period(conn: AsyncConnection, partner_id: str, environment: str, period: str) -> Any:
    return (
        await conn.execute(
            _one_partner(partner_id, environment)
            .select(_statements)
            .where(_statements.c.period == period)
        )
    ).first()


async def settle(
    conn: AsyncConnection, ring: KeyRing, *, statement_id: str, actor: str, now: datetime
) -> Any:
    """Settle once: the statement and its lines' referrals move from ``pending_settlement``
    to ``settled`` and ``commission.settled`` is queued for the partner, in the caller's
    transaction. 404 unknown; 409 ``already_settled``."""
    changed = await conn.execute(
        update(_statements)
        .where(_statements.c.id == statement_id, _statements.c.status == PENDING_SETTLEMENT)
        .values(status=SETTLED, settled_by=actor, settled_at=now)
    )
    row = await get_any(conn, statement_id)
    if row is None:
        raise ApiError(404, "not_found", "No commission statement with this identifier.")
    if not changed.rowcount:
        raise ApiError(409, "already_settled", "This statement is already settled.")
    await conn.execute(
        update(_referrals)
        .where(
            _referrals.c.id.in_(
                select(_lines.c.referral_id).where(_lines.c.statement_id == statement_id)
            ),
            _referrals.c.commission_status == PENDING_SETTLEMENT,
        )
        .values(commission_status=SETTLED, updated_at=now)
    )
    show_payments = (
        await conn.execute(
            select(_partners.c.show_payments).where(_partners.c.id == row.partner_id)
        )
    ).scalar_one()
    await record_events(
        conn,
        ring,
        partner_id=row.partner_id,
        environment=row.environment,
        events=[
            NewEvent(
                SETTLED_EVENT,
                settled_event_data(row, show_amounts=bool(show_payments)),
                occurred_at=now,
            )
        ],
    )
    return row


def settled_event_data(row: Any, *, show_amounts: bool) -> dict[str, Any]:
    """The ``commission.settled`` payload (docs/webhooks.md): totals only, no patient data;
    ``total_minor`` is null when the agreement does not show amounts and commission."""
    return {
        "statement_id": row.id,
        "period": row.period,
        "currency": row.currency,
        "total_minor": row.commission_total_minor if show_amounts else None,
        "line_count": row.line_count,
        "settled_at": iso(row.settled_at),
    }


async def get_any(conn: AsyncConnection, statement_id: str) -> Any:
    """Coordinators' read, across partners by design."""
    return (await conn.execute(select(_statements).where(_statements.c.id == statement_id))).first()


async def list_all(conn: AsyncConnection, *, limit: int = 200) -> Sequence[Any]:
    """Coordinators' list (console), newest first, with the partner's name."""
    return (
        await conn.execute(
            select(_statements, _partners.c.name.label("partner_name"))
            .join(_partners, _partners.c.id == _statements.c.partner_id)
            .order_by(_statements.c.id.desc())
            .limit(limit)
        )
    ).all()


async def list_statements(
    conn: AsyncConnection, *, scope: PartnerScope, before_id: str | None, limit: int
) -> tuple[list[Any], bool]:
    """Newest first, keyset on the time-ordered id. Returns (rows, has_more)."""
    query = scope.select(_statements)
    if before_id is not None:
        query = query.where(_statements.c.id < before_id)
    rows = (await conn.execute(query.order_by(_statements.c.id.desc()).limit(limit + 1))).all()
    return list(rows[:limit]), len(rows) > limit


async def get_statement(conn: AsyncConnection, *, scope: PartnerScope, statement_id: str) -> Any:
    return (
        await conn.execute(scope.select(_statements).where(_statements.c.id == statement_id))
    ).first()


async def statement_lines(conn: AsyncConnection, statement_id: str) -> Sequence[Any]:
    """The lines of a statement already found in scope, oldest payment first, with the
    referral's commission status now."""
    return (
        await conn.execute(
            select(_lines, _referrals.c.commission_status)
            .join(_referrals, _referrals.c.id == _lines.c.referral_id)
            .where(_lines.c.statement_id == statement_id)
            .order_by(_lines.c.paid_at, _lines.c.referral_id)
        )
    ).all()


def _header_fields(row: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "period": row.period,
        "environment": row.environment,
        "currency": row.currency,
        "status": row.status,
        "line_count": row.line_count,
        "amount_total_minor": row.amount_total_minor,
        "commission_total_minor": row.commission_total_minor,
        "created_at": iso(row.created_at),
        "settled_at": iso(row.settled_at) if row.settled_at is not None else None,
    }


def record(row: Any) -> StatementRecord:
    return StatementRecord(**_header_fields(row))


def detail(row: Any, lines: Sequence[Any]) -> StatementDetail:
    """The statement with its lines (the JSON form of one statement)."""
    return StatementDetail(**_header_fields(row), lines=[line_record(line) for line in lines])


def line_record(line: Any) -> StatementLine:
    return StatementLine(
        referral_id=line.referral_id,
        paid_at=iso(line.paid_at),
        currency=line.currency,
        amount_minor=line.amount_minor,
        commission_minor=line.commission_minor,
        commission_status=line.commission_status,
    )


def encode_cursor(last_id: str) -> str:
    return cursors.encode_cursor(last_id)


def decode_cursor(cursor: str) -> str | None:
    return cursors.decode_cursor(cursor, _CURSOR_ID)


async def partners_with_commission(conn: AsyncConnection) -> Sequence[Any]:
    """Coordinators' pick list: partners whose agreement grants commission, by name."""
    return (
        await conn.execute(
            select(_partners.c.id, _partners.c.name)
            .where(
                (func.coalesce(_partners.c.commission_bps, 0) > 0)
                | (func.coalesce(_partners.c.commission_fixed_minor, 0) > 0)
            )
            .order_by(_partners.c.name, _partners.c.id)
        )
    ).all()
