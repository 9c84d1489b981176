"""Monthly itemized invoice references for completed sessions.

A partner has one invoice per month and environment, ``INV-<yyyymm>-<partner>``; each
completed session is a numbered item on it: ``INV-202611-01M87F79VEEDEV9Q6X7PMFWETH-0007``
(sandbox: ``...-T0007``). The partner part is the whole partner id without ``ptn_``, upper
case: a shorter cut could name two partners, and the references are unique. Item numbers
come from an atomic counter (INSERT ... ON CONFLICT DO UPDATE ... RETURNING), so concurrent
completions never share a number.

Sessions billed to an HMO or a sponsoring employer are numbered on that payer's invoice
instead (billing/payer_invoices.py, chosen in workflows/sessions.py); this numbering is for
self-pay referrals.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.clock import as_utc
from rehabref.db import table
from rehabref.tables.care import InvoiceCounter

_counters = table(InvoiceCounter)


def invoice_number(partner_id: str, when: datetime) -> str:
    return f"INV-{as_utc(when):%Y%m}-{partner_id.removeprefix('ptn_').upper()}"


async def next_invoice_reference(
    conn: AsyncConnection, *, partner_id: str, environment: str, when: datetime
) -> str:
    period = f"{as_utc(when):%Y%m}"
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    statement = dialect.insert(_counters).values(
        partner_id=partner_id, environment=environment, period=period, last_item=1
    )
    statement = statement.on_conflict_do_update(
        index_elements=["partner_id", "environment", "period"],
        set_={"last_item": _counters.c.last_item + 1},
    ).returning(_counters.c.last_item)
    item = (await conn.execute(statement)).scalar_one()
    marker = "T" if environment == "test" else ""
    return f"{invoice_number(partner_id, when)}-{marker}{item:04d}"
