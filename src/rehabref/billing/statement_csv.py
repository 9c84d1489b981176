"""A commission statement as CSV: one row per line, then a ``total`` row.

Threat: a spreadsheet formula injected through a field. Every value written is ours (ids,
ISO dates, integers, the month, a status), never partner or patient free text, so no cell
can start with ``=``, ``+``, ``-`` or ``@``; the file carries no patient data at all.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from rehabref.clock import iso

CSV_HEADER = (
    "statement_id",
    "period",
    "referral_id",
    "paid_at",
    "currency",
    "amount_minor",
    "commission_minor",
    "commission_status",
)


def statement_csv(statement: Any, lines: Sequence[Any]) -> bytes:
    """One row per line, then a ``total`` row; amounts in integer minor units."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(CSV_HEADER)
    for line in lines:
        writer.writerow(
            (
                statement.id,
                statement.period,
                line.referral_id,
                iso(line.paid_at),
                line.currency,
                line.amount_minor,
                line.commission_minor,
                line.commission_status,
            )
        )
    writer.writerow(
        (
            statement.id,
            statement.period,
            "total",
            "",
            statement.currency,
            statement.amount_total_minor,
            statement.commission_total_minor,
            statement.status,
        )
    )
    return buffer.getvalue().encode()
