"""Monthly HMO and employer invoices in the database: draft (idempotent per payer,
environment and month), issue, mark paid, and the coordinators' reads.

Threat: an invoice changed after it was sent, or marked paid twice. A draft's lines and totals
are taken once, after its month ended (lines are billed in the month they are recorded, so
none can arrive later); every move is a conditional update from the state ``ALLOWED`` allows
(of two concurrent moves exactly one changes the row, the other is 409). Nothing here
commits: the caller's ``db.write()`` does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref import cursors
from rehabref.audit import trail
from rehabref.billing.payer_invoices import (
    DRAFT,
    EMPLOYER,
    INVOICE_CURRENCY,
    ISSUED,
    PAID,
    LineAmounts,
    can_move,
    invoice_number,
    previous_period,
    totals,
)
from rehabref.billing.statements import PeriodError, period_is_over
from rehabref.clock import iso
from rehabref.db import insert_ignoring_duplicates, table
from rehabref.errors import ApiError
from rehabref.ids import new_id
from rehabref.tables.partners import Partner
from rehabref.tables.payer_billing import ClaimLine, PayerInvoice

_invoices = table(PayerInvoice)
_lines = table(ClaimLine)
_partners = table(Partner)
_CURSOR_ID = re.compile(r"^pin_[0-9a-z]{26}$")


async def _payer_name(conn: AsyncConnection, payer_kind: str, payer_id: str) -> str:
    if payer_kind != EMPLOYER:
        return payer_id
    name = (
        await conn.execute(select(_partners.c.name).where(_partners.c.id == payer_id))
    ).scalar_one_or_none()
    return str(name) if name is not None else payer_id


async def draft(
    conn: AsyncConnection,
    *,
    payer_kind: str,
    payer_id: str,
    environment: str,
    period: str,
    actor: str,
    now: datetime,
) -> tuple[Any, bool]:
    """(invoice, created). Every repeat returns the invoice made first. 409
    ``period_not_over`` for a month not yet ended; 409 ``no_claim_lines`` for a payer with
    no lines that month."""
    try:
        over = period_is_over(period, now)
    except PeriodError as exc:
        raise ApiError(
            422, "validation_error", "Some fields are invalid.", fields={"period": str(exc)}
        ) from None
    number = invoice_number(payer_kind, payer_id, environment, period)
    existing = await by_number(conn, number)
    if existing is not None:
        return existing, False
    if not over:
        raise ApiError(409, "period_not_over", "An invoice is made once its month has ended.")
    amounts = (
        await conn.execute(
            select(_lines.c.amount_minor, _lines.c.co_pay_minor).where(
                _lines.c.invoice_number == number
            )
        )
    ).all()
    if not amounts:
        raise ApiError(
            409, "no_claim_lines", "This payer has no claim lines in this month and environment."
        )
    total = totals(LineAmounts(row.amount_minor, row.co_pay_minor) for row in amounts)
    inserted = await insert_ignoring_duplicates(
        conn,
        _invoices,
        {
            "id": new_id("pin"),
            "number": number,
            "payer_kind": payer_kind,
            "payer_id": payer_id,
            "payer_name": await _payer_name(conn, payer_kind, payer_id),
            "environment": environment,
            "period": period,
            "currency": INVOICE_CURRENCY,
            "status": DRAFT,
            "line_count": total.line_count,
            "amount_total_minor": total.amount_total_minor,
            "co_pay_total_minor": total.co_pay_total_minor,
            "payable_total_minor": total.payable_total_minor,
            "created_by": actor,
            "created_at": now,
        },
    )
    return await by_number(conn, number), inserted


async def payers_to_draft(conn: AsyncConnection, period: str) -> Sequence[Any]:
    """(payer_kind, payer_id, environment) with claim lines in ``period`` and no invoice."""
    invoiced = select(_invoices.c.id).where(_invoices.c.number == _lines.c.invoice_number).exists()
    return (
        await conn.execute(
            select(_lines.c.payer_kind, _lines.c.payer_id, _lines.c.environment)
            .where(_lines.c.period == period, ~invoiced)
            .distinct()
            .order_by(_lines.c.payer_kind, _lines.c.payer_id, _lines.c.environment)
        )
    ).all()


async def move(
    conn: AsyncConnection,
    *,
    invoice_id: str,
    to: str,
    actor: str,
    now: datetime,
    remittance_reference: str | None = None,
) -> Any:
    """Move an invoice as ``ALLOWED`` says; 404 unknown, 409 ``invalid_transition``."""
    row = await get(conn, invoice_id)
    if row is None:
        raise ApiError(404, "not_found", "No payer invoice with this identifier.")
    if not can_move(row.status, to):
        raise _illegal(row.status, to)
    values: dict[str, Any] = (
        {"status": ISSUED, "issued_by": actor, "issued_at": now}
        if to == ISSUED
        else {
            "status": PAID,
            "paid_by": actor,
            "paid_at": now,
            "remittance_reference": remittance_reference,
        }
    )
    changed = await conn.execute(
        update(_invoices)
        .where(_invoices.c.id == invoice_id, _invoices.c.status == row.status)
        .values(**values)
    )
    if not changed.rowcount:  # another coordinator moved it first
        current = await get(conn, invoice_id)
        raise _illegal(current.status if current is not None else row.status, to)
    return await get(conn, invoice_id)


def _illegal(current: str, to: str) -> ApiError:
    return ApiError(
        409,
        "invalid_transition",
        f"A payer invoice cannot move from {current} to {to}.",
        fields={"status": f"Currently {current}."},
    )


async def get(conn: AsyncConnection, invoice_id: str) -> Any:
    return (await conn.execute(select(_invoices).where(_invoices.c.id == invoice_id))).first()


async def by_number(conn: AsyncConnection, number: str) -> Any:
    return (await conn.execute(select(_invoices).where(_invoices.c.number == number))).first()


async def list_page(
    conn: AsyncConnection, *, status: str | None, before_id: str | None, limit: int
) -> tuple[list[Any], bool]:
    """Coordinators' list, newest first, across payers by design. Returns (rows, has_more)."""
    query = select(_invoices)
    if status is not None:
        query = query.where(_invoices.c.status == status)
    if before_id is not None:
        query = query.where(_invoices.c.id < before_id)
    rows = (await conn.execute(query.order_by(_invoices.c.id.desc()).limit(limit + 1))).all()
    return list(rows[:limit]), len(rows) > limit


def encode_cursor(last_id: str) -> str:
    return cursors.encode_cursor(last_id)


def decode_cursor(cursor: str) -> str | None:
    return cursors.decode_cursor(cursor, _CURSOR_ID)


async def invoice_lines(conn: AsyncConnection, number: str) -> Sequence[Any]:
    return (
        await conn.execute(
            select(_lines).where(_lines.c.invoice_number == number).order_by(_lines.c.line_number)
        )
    ).all()


def record(row: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "number": row.number,
        "payer_kind": row.payer_kind,
        "payer_id": row.payer_id,
        "payer_name": row.payer_name,
        "environment": row.environment,
        "period": row.period,
        "currency": row.currency,
        "status": row.status,
        "line_count": row.line_count,
        "amount_total_minor": row.amount_total_minor,
        "co_pay_total_minor": row.co_pay_total_minor,
        "payable_total_minor": row.payable_total_minor,
        "created_at": iso(row.created_at),
        "issued_at": iso(row.issued_at) if row.issued_at is not None else None,
        "paid_at": iso(row.paid_at) if row.paid_at is not None else None,
        "remittance_reference": row.remittance_reference,
    }


def line_record(line: Any) -> dict[str, Any]:
    return {
        "line_number": line.line_number,
        "invoice_reference": line.invoice_reference,
        "referral_id": line.referral_id,
        "session_id": line.session_id,
        "member_id": line.member_id,
        "policy": line.policy,
        "pre_auth_token": line.pre_auth_token,
        "procedure_code": line.procedure_code,
        "session_date": line.session_date.isoformat(),
        "currency": line.currency,
        "amount_minor": line.amount_minor,
        "co_pay_minor": line.co_pay_minor,
        "payable_minor": line.amount_minor - line.co_pay_minor,
    }


MONTHLY_ACTOR = "system:monthly-invoices"


async def draft_last_month(conn: AsyncConnection, *, now: datetime) -> list[str]:
    """The monthly job: draft every payer's invoice for the month before ``now`` that has
    claim lines and no invoice yet (idempotent; several workers may run it at once)."""
    period = previous_period(now)
    made: list[str] = []
    for payer in await payers_to_draft(conn, period):
        row, created = await draft(
            conn,
            payer_kind=payer.payer_kind,
            payer_id=payer.payer_id,
            environment=payer.environment,
            period=period,
            actor=MONTHLY_ACTOR,
            now=now,
        )
        if created:
            await trail.record(
                conn, trail.entry(MONTHLY_ACTOR, "payer_invoice.drafted", subject=row.id)
            )
            made.append(row.id)
    return made
