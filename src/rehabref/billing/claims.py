"""Claim lines: each completed session of an HMO-billed or employer-sponsored referral.

Threat: two completions at once sharing a line number, or one session billed twice. The line
number comes from one atomic upsert on ``payer_invoice_counters`` (INSERT ... ON CONFLICT DO
UPDATE ... RETURNING), and ``claim_lines`` is unique per session and per reference. Written
by the session-completed workflow in the completing transaction; nothing here commits.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import insert
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.billing.payer_invoices import (
    INVOICE_CURRENCY,
    invoice_number,
    line_amounts,
    line_reference,
    period_of,
)
from rehabref.db import table
from rehabref.ids import new_id
from rehabref.tables.payer_billing import ClaimLine, PayerInvoiceCounter

_counters = table(PayerInvoiceCounter)
_lines = table(ClaimLine)


@dataclass(frozen=True)
class Payer:
    """Who is billed for a referral's sessions and what one session costs them."""

    kind: str  # hmo | employer
    payer_id: str  # the HMO code, or the sponsoring employer's partner id
    procedure_code: str
    rate_minor: int
    co_pay_minor: int = 0
    member_id: str | None = None
    policy: str | None = None
    pre_auth_token: str | None = None


@dataclass(frozen=True)
class ReservedLine:
    invoice_number: str
    line_number: int
    period: str

    @property
    def reference(self) -> str:
        return line_reference(self.invoice_number, self.line_number)


async def reserve_line(
    conn: AsyncConnection, *, payer: Payer, environment: str, now: datetime
) -> ReservedLine:
    """The next line of the payer's invoice for the month ``now`` falls in."""
    period = period_of(now)
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    statement = (
        dialect.insert(_counters)
        .values(
            payer_kind=payer.kind,
            payer_id=payer.payer_id,
            environment=environment,
            period=period,
            last_line=1,
        )
        .on_conflict_do_update(
            index_elements=["payer_kind", "payer_id", "environment", "period"],
            set_={"last_line": _counters.c.last_line + 1},
        )
        .returning(_counters.c.last_line)
    )
    line = int((await conn.execute(statement)).scalar_one())
    number = invoice_number(payer.kind, payer.payer_id, environment, period)
    return ReservedLine(invoice_number=number, line_number=line, period=period)


async def write_line(
    conn: AsyncConnection,
    *,
    payer: Payer,
    reserved: ReservedLine,
    environment: str,
    referral_id: str,
    session_id: str,
    session_date: date,
    now: datetime,
) -> str:
    amount, co_pay = line_amounts(payer.rate_minor, payer.co_pay_minor)
    line_id = new_id("cln")
    await conn.execute(
        insert(_lines),
        {
            "id": line_id,
            "payer_kind": payer.kind,
            "payer_id": payer.payer_id,
            "environment": environment,
            "period": reserved.period,
            "invoice_number": reserved.invoice_number,
            "line_number": reserved.line_number,
            "invoice_reference": reserved.reference,
            "referral_id": referral_id,
            "session_id": session_id,
            "member_id": payer.member_id,
            "policy": payer.policy,
            "pre_auth_token": payer.pre_auth_token,
            "procedure_code": payer.procedure_code,
            "session_date": session_date,
            "currency": INVOICE_CURRENCY,
            "amount_minor": amount,
            "co_pay_minor": co_pay,
            "created_at": now,
        },
    )
    return line_id
