"""A payer invoice as CSV: one row per line, then a ``total`` row (the PDF: payer_invoice_pdf).

Threat: patient data or spreadsheet formulas leaking through an export. Lines carry ids,
member ids, dates, codes and amounts: no names, phones or clinical text. Every CSV value is
ours (ids, codes, ISO dates, integers), so no cell can start with ``=``, ``+``, ``-`` or ``@``.
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
                line.member_id or "",
                line.policy or "",
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
