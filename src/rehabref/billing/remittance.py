"""Remittance CSV imports: an HMO's or employer's statement of which invoices it paid.

Format (UTF-8, header first)::

    invoice_number,amount_paid_minor,paid_on,remittance_reference
    HMO-202610-AXA_MANSARD,4800000,2026-11-20,AXA-RMT-0042

Threat: a half-applied or wrong file marking invoices paid that were not. Every row is checked
first (known invoice, ``issued``, the amount equal to its payable total in integer kobo, a
date not in the future, each invoice once); any bad row rejects the whole file with a
message per row (``row 3``: the file's line number) and nothing is applied. Values are ours
to check, never echoed into logs.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.billing import payer_invoice_store as store
from rehabref.billing.payer_invoices import ISSUED, PAID
from rehabref.clock import as_utc
from rehabref.errors import ApiError

COLUMNS = ("invoice_number", "amount_paid_minor", "paid_on", "remittance_reference")
MAX_ROWS = 1000
_REFERENCE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_./-]{0,99}$")
_AMOUNT = re.compile(r"^\d{1,15}$")


@dataclass(frozen=True)
class RemittanceRow:
    line: int
    invoice_number: str
    amount_paid_minor: int
    paid_on: date
    remittance_reference: str


def _reject(fields: dict[str, str], message: str) -> ApiError:
    return ApiError(422, "validation_error", message, fields=fields)


def parse(text: str, *, today: date) -> list[RemittanceRow]:
    """The file's rows, or 422 with every problem (whole-file ones under ``file``)."""
    try:
        return _parse(text, today=today)
    except csv.Error as exc:  # e.g. a field over the csv module's size limit
        raise _reject(
            {"file": f"Not a CSV file this import can read ({exc})."},
            "The remittance file cannot be read.",
        ) from None


def _parse(text: str, *, today: date) -> list[RemittanceRow]:
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
    header = next(reader, None)
    if header is None or tuple(cell.strip() for cell in header) != COLUMNS:
        raise _reject(
            {"file": f"The header must be exactly: {','.join(COLUMNS)}."},
            "The remittance file cannot be read.",
        )
    rows: list[RemittanceRow] = []
    problems: dict[str, str] = {}
    for line, cells in enumerate(reader, start=2):
        if not any(cell.strip() for cell in cells):
            continue
        if len(rows) + len(problems) >= MAX_ROWS:
            raise _reject({"file": f"At most {MAX_ROWS} rows."}, "The remittance file is too long.")
        row, problem = _row(line, cells, today)
        if problem is not None:
            problems[f"row {line}"] = problem
        elif row is not None:
            rows.append(row)
    if not rows and not problems:
        raise _reject({"file": "No rows."}, "The remittance file has no rows.")
    if problems:
        raise _reject(problems, "Some rows are invalid; nothing was applied.")
    return rows


def _row(line: int, cells: list[str], today: date) -> tuple[RemittanceRow | None, str | None]:
    if len(cells) != len(COLUMNS):
        return None, f"expected {len(COLUMNS)} columns, found {len(cells)}"
    number, amount, paid_on, reference = (cell.strip() for cell in cells)
    if not number:
        return None, "invoice_number is empty"
    if not _AMOUNT.match(amount):
        return None, "amount_paid_minor must be a whole number of kobo (digits only)"
    try:
        day = date.fromisoformat(paid_on)
    except ValueError:
        return None, "paid_on must be a date as YYYY-MM-DD"
    if day > today:
        return None, "paid_on is in the future"
    if not _REFERENCE.match(reference):
        return None, "remittance_reference: 1-100 letters, digits, _ . / -"
    return RemittanceRow(line, number, int(amount), day, reference), None


async def apply(
    conn: AsyncConnection, rows: list[RemittanceRow], *, actor: str, now: datetime
) -> list[Any]:
    """Check every row against the invoices, then mark them all paid (or none: 422)."""
    problems: dict[str, str] = {}
    found: list[tuple[RemittanceRow, Any]] = []
    seen: set[str] = set()
    for row in rows:
        invoice = await store.by_number(conn, row.invoice_number)
        key = f"row {row.line}"
        if row.invoice_number in seen:
            problems[key] = "this invoice is already paid by an earlier row of the file"
        elif invoice is None:
            problems[key] = "no invoice with this number"
        elif invoice.status != ISSUED:
            problems[key] = f"the invoice is {invoice.status}; only an issued invoice is paid"
        elif invoice.issued_at is not None and row.paid_on < as_utc(invoice.issued_at).date():
            problems[key] = (
                f"paid_on {row.paid_on.isoformat()} is before the invoice was issued "
                f"({as_utc(invoice.issued_at).date().isoformat()})"
            )
        elif invoice.payable_total_minor != row.amount_paid_minor:
            problems[key] = (
                f"amount_paid_minor {row.amount_paid_minor} is not the invoice's payable "
                f"total {invoice.payable_total_minor}"
            )
        else:
            found.append((row, invoice))
        seen.add(row.invoice_number)
    if problems:
        raise _reject(problems, "Some rows do not match an issued invoice; nothing was applied.")
    paid = []
    for row, invoice in found:
        paid_at = datetime(row.paid_on.year, row.paid_on.month, row.paid_on.day, tzinfo=UTC)
        paid.append(
            await store.move(
                conn,
                invoice_id=invoice.id,
                to=PAID,
                actor=actor,
                now=min(paid_at, now),
                remittance_reference=row.remittance_reference,
            )
        )
    return paid
