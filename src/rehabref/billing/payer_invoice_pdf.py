"""A payer invoice as PDF (fpdf2, the DejaVu fonts shipped with matplotlib).

Threat: patient data leaking through a document sent to an insurer or employer. It shows the
payer, the month, line numbers, dates, member ids, procedure codes and amounts: no names,
phones or clinical text.
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


def invoice_pdf(invoice: Any, lines: Sequence[Any]) -> bytes:
    pdf = FPDF(format="A4")
    pdf.add_font("DejaVu", "", str(_FONTS / "DejaVuSans.ttf"))
    pdf.add_font("DejaVu", "B", str(_FONTS / "DejaVuSans-Bold.ttf"))
    pdf.set_title(f"Invoice {invoice.number}")
    pdf.add_page()
    pdf.set_font("DejaVu", "B", 16)
    pdf.cell(0, 10, f"Invoice {invoice.number}", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font("DejaVu", size=10)
    payer = "HMO" if invoice.payer_kind == "hmo" else "Employer"
    for label, value in (
        (payer, invoice.payer_name),
        ("Period", invoice.period),
        ("Status", invoice.status),
    ):
        pdf.cell(0, 6, f"{label}: {value}", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.ln(4)
    widths = (10, 22, 30, 38, 28, 28, 28)
    headings = ("#", "Date", "Member", "Procedure", "Amount", "Co-pay", "Payable")
    pdf.set_font("DejaVu", "B", 8)
    for width, heading in zip(widths, headings, strict=True):
        pdf.cell(width, 7, heading, border="B")
    pdf.ln()
    pdf.set_font("DejaVu", size=8)
    for line in lines:
        cells = (
            str(line.line_number),
            line.session_date.isoformat(),
            line.member_id or "-",
            line.procedure_code,
            format_money(line.amount_minor, line.currency),
            format_money(line.co_pay_minor, line.currency),
            format_money(line.amount_minor - line.co_pay_minor, line.currency),
        )
        for width, text in zip(widths, cells, strict=True):
            pdf.cell(width, 6, text)
        pdf.ln()
    pdf.set_font("DejaVu", "B", 8)
    totals = (
        "",
        f"Total ({invoice.line_count} lines)",
        "",
        "",
        format_money(invoice.amount_total_minor, invoice.currency),
        format_money(invoice.co_pay_total_minor, invoice.currency),
        format_money(invoice.payable_total_minor, invoice.currency),
    )
    for width, text in zip(widths, totals, strict=True):
        pdf.cell(width, 7, text, border="T")
    pdf.ln()
    return bytes(pdf.output())
