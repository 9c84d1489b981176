"""The export as a PDF the patient can read: each referral, its history, visits and the
messages both ways (fpdf2 with the DejaVu fonts matplotlib ships, as the discharge PDF).

Only what ``person_export.export_person`` returned is printed; the JSON stays the complete
machine-readable copy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib
from fpdf import FPDF
from fpdf.enums import XPos, YPos

from rehabref.money import format_money

_FONTS = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
_REFERRAL_FIELDS = (
    ("Referred by", "partner_name"),
    ("Status", "status"),
    ("Created", "created_at"),
    ("First name", "patient_first_name"),
    ("Last name", "patient_last_name"),
    ("Phone", "patient_phone"),
    ("E-mail", "patient_email"),
    ("City", "patient_city"),
    ("Area", "patient_area"),
    ("Reason", "reason"),
    ("Diagnosis", "diagnosis"),
    ("Consent given", "consent_accepted_at"),
    ("Consent withdrawn", "consent_withdrawn_at"),
    ("Appointment", "appointment_scheduled_at"),
    ("Payment", "payment_amount_minor"),
)


class _Document(FPDF):
    def footer(self) -> None:
        self.set_y(-12)
        self.set_font("DejaVu", size=8)
        self.cell(0, 6, f"Your data held by rehabref - page {self.page_no()}", align="C")


def _text(pdf: FPDF, text: str, *, bold: bool = False, size: int = 10) -> None:
    pdf.set_font("DejaVu", "B" if bold else "", size)
    pdf.multi_cell(0, 6, text, new_x=XPos.LMARGIN, new_y=YPos.NEXT)


def export_pdf(document: dict[str, Any]) -> bytes:
    pdf = _Document(format="A4")
    pdf.add_font("DejaVu", "", str(_FONTS / "DejaVuSans.ttf"))
    pdf.add_font("DejaVu", "B", str(_FONTS / "DejaVuSans-Bold.ttf"))
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.add_page()
    _text(pdf, "Your data held by rehabref", bold=True, size=16)
    _text(pdf, f"Prepared {document['generated_at']}. Everything we hold about you follows.")
    for number, referral in enumerate(document["referrals"], start=1):
        pdf.ln(3)
        _text(pdf, f"Referral {number} ({referral['id']})", bold=True, size=12)
        for label, key in _REFERRAL_FIELDS:
            value = referral.get(key)
            if key == "payment_amount_minor" and value is not None:
                value = format_money(value, referral.get("payment_currency") or "NGN")
            if value is not None:
                _text(pdf, f"{label}: {value}")
        for move in referral["transitions"]:
            _text(pdf, f"{move['created_at']}: {move['from_status'] or '-'} -> {move['to_status']}")
        for visit in referral["therapy_sessions"]:
            line = f"Session {visit['session_number']} ({visit['status']}) {visit['scheduled_at']}"
            if visit.get("notes_summary"):
                line += f": {visit['notes_summary']}"
            _text(pdf, line)
    pdf.ln(3)
    _text(pdf, "Messages we sent you", bold=True, size=12)
    for message in document["messages_sent"]:
        _text(pdf, f"{message['created_at']} ({message['channel']}): {message['text'] or ''}")
    _text(pdf, "Messages you sent us", bold=True, size=12)
    for message in document["messages_received"]:
        _text(pdf, f"{message['received_at']} ({message['channel']}): {message['text'] or ''}")
    return bytes(pdf.output())
