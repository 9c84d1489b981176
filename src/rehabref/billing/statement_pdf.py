"""A commission statement as PDF (fpdf2, the DejaVu fonts shipped with matplotlib).

It shows the partner's name, the month, ids, dates and amounts: no patient data.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib
from fpdf import FPDF
from fpdf.enums import XPos, YPos

from rehabref.money import format_money

_FONTS = Path(matplotlib.get_data_path()) / "fonts" / "ttf"


def statement_pdf(statement: Any, lines: Sequence[Any], *, partner_name: str) -> bytes:
    pdf = FPDF(format="A4")
    pdf.add_font("DejaVu", "", str(_FONTS / "DejaVuSans.ttf"))
    pdf.add_font("DejaVu", "B", str(_FONTS / "DejaVuSans-Bold.ttf"))
    pdf.set_title(f"Commission statement {statement.period}")
    pdf.add_page()
    pdf.set_font("DejaVu", "B", 16)
    pdf.cell(0, 10, "Commission statement", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font("DejaVu", size=10)
    for label, value in (
        ("Partner", partner_name),
        ("Period", statement.period),
        ("Statement", statement.id),
        ("Status", statement.status),
    ):
        pdf.cell(0, 6, f"{label}: {value}", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.ln(4)
    widths = (62, 40, 42, 42)
    pdf.set_font("DejaVu", "B", 9)
    for width, heading in zip(
        widths, ("Referral", "Paid (UTC)", "Amount", "Commission"), strict=True
    ):
        pdf.cell(width, 7, heading, border="B")
    pdf.ln()
    pdf.set_font("DejaVu", size=9)
    for line in lines:
        cells = (
            line.referral_id,
            line.paid_at.strftime("%Y-%m-%d %H:%M"),
            format_money(line.amount_minor, line.currency),
            format_money(line.commission_minor, line.currency),
        )
        for width, text in zip(widths, cells, strict=True):
            pdf.cell(width, 6, text)
        pdf.ln()
    pdf.set_font("DejaVu", "B", 9)
    totals = (
        f"Total ({statement.line_count} lines)",
        "",
        format_money(statement.amount_total_minor, statement.currency),
        format_money(statement.commission_total_minor, statement.currency),
    )
    for width, text in zip(widths, totals, strict=True):
        pdf.cell(width, 7, text, border="T")
    pdf.ln()
    return bytes(pdf.output())
