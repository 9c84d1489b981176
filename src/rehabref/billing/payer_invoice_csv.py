"""A payer invoice as CSV: one row per line, then a ``total`` row (the PDF: payer_invoice_pdf).

Threat: patient data or spreadsheet formulas leaking through an export. Lines carry ids,
member ids, dates, codes and amounts: no names, phones or clinical text. Member ids and plan
tiers come from the HMO's registry (free text): a cell starting with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return is written with a leading ``'`` so a spreadsheet shows it
as text instead of running it.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

CSV_HEADER = (
    "invoice_number",
    "period",
    "line_number",
    "invoice_reference",
    "session_date",
    "member_id",
    "policy",
    "procedure_code",
    "referral_id",
    "session_id",
    "currency",
    "amount_minor",
    "co_pay_minor",
    "payable_minor",
)


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def text_cell(value: str | None) -> str:
    """A free-text value as a spreadsheet shows it, never as a formula."""
    text = value or ""
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def invoice_csv(invoice: Any, lines: Sequence[Any]) -> bytes:
    """One row per line, then a ``total`` row; amounts in integer minor units."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(CSV_HEADER)
    for line in lines:
        writer.writerow(
            (
                invoice.number,
                invoice.period,
                line.line_number,
                line.invoice_reference,
                line.session_date.isoformat(),
                text_cell(line.member_id),
                text_cell(line.policy),
                line.procedure_code,
                line.referral_id,
                line.session_id,
                line.currency,
                line.amount_minor,
                line.co_pay_minor,
                line.amount_minor - line.co_pay_minor,
            )
        )
    writer.writerow(
        (
            invoice.number,
            invoice.period,
            "total",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            invoice.currency,
            invoice.amount_total_minor,
            invoice.co_pay_total_minor,
            invoice.payable_total_minor,
        )
    )
    return buffer.getvalue().encode()
