"""The discharge summary PDF: patient, referrer, diagnosis, period, measures, a pain-score
chart (matplotlib, Agg, object API only so it is safe in a worker thread) and the conclusion.
"""

from __future__ import annotations

import io
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import matplotlib
from fpdf import FPDF
from fpdf.enums import XPos, YPos
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from rehabref.care.outcomes import Outcome, conclusion, patient_name
from rehabref.care.sessions import duration_seconds
from rehabref.clock import as_utc
from rehabref.crypto import KeyRing
from rehabref.referrals.rows import ReferralRow
from rehabref.referrals.sealing import clinical_text

_FONTS = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
_INK = (30, 41, 59)


def pain_chart_png(points: list[tuple[datetime, float]]) -> bytes:
    figure = Figure(figsize=(6.4, 2.6), dpi=150)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(1, 1, 1)
    if points:
        xs = list(range(1, len(points) + 1))
        axes.plot(xs, [score for _, score in points], marker="o", color="#1d4ed8", linewidth=2)
        axes.set_xticks(xs)
        axes.set_xticklabels([as_utc(when).strftime("%d %b") for when, _ in points], fontsize=7)
    else:
        axes.text(0.5, 0.5, "No pain scores recorded", ha="center", va="center")
        axes.set_xticks([])
    axes.set_ylim(0, 10)
    axes.set_ylabel("Pain (0-10)")
    axes.set_title("Pain score trajectory (NPRS/VAS, session check-in and check-out)", fontsize=9)
    axes.grid(True, alpha=0.3)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


class _Document(FPDF):
    def footer(self) -> None:
        self.set_y(-12)
        self.set_font("DejaVu", size=8)
        self.cell(0, 6, f"Confidential clinical summary - page {self.page_no()}", align="C")


def _line(pdf: FPDF, label: str, value: str) -> None:
    pdf.set_font("DejaVu", "B", 10)
    pdf.cell(45, 6, label, new_x=XPos.RIGHT, new_y=YPos.TOP)
    pdf.set_font("DejaVu", size=10)
    pdf.multi_cell(0, 6, value, new_x=XPos.LMARGIN, new_y=YPos.NEXT)


_UNITS = {"PSFS": "/10", "NPRS": "/10", "VAS": "/10", "NDI": "%", "ODI": "%", "ROM": "°"}


def _measure_text(measure: dict[str, Any]) -> str:
    text = f"{measure['scale']} {measure['score']:g}{_UNITS.get(measure['scale'], '')}"
    detail = measure["detail"]
    if measure["scale"] == "ROM":
        side = detail.get("side")
        where = f"{detail.get('joint')} {detail.get('movement')}"
        text += f", {where}" + (f" ({side})" if side and side != "not_applicable" else "")
    return text


def _heading(pdf: FPDF, text: str) -> None:
    pdf.ln(3)
    pdf.set_font("DejaVu", "B", 12)
    pdf.cell(0, 8, text, new_x=XPos.LMARGIN, new_y=YPos.NEXT)


class NamedPhysio(Protocol):
    """What the summary names of the treating physiotherapist (``physiotherapists``)."""

    @property
    def name(self) -> str: ...

    @property
    def license_number(self) -> str: ...


def render_pdf(
    *,
    ring: KeyRing,
    referral: ReferralRow,
    outcome: Outcome,
    physio: NamedPhysio | None,
    generated_at: datetime,
) -> bytes:
    pdf = _Document(format="A4")
    pdf.add_font("DejaVu", "", str(_FONTS / "DejaVuSans.ttf"))
    pdf.add_font("DejaVu", "B", str(_FONTS / "DejaVuSans-Bold.ttf"))
    pdf.set_title("Discharge summary")
    pdf.set_text_color(*_INK)
    pdf.add_page()
    pdf.set_font("DejaVu", "B", 16)
    pdf.cell(0, 10, "Physiotherapy discharge summary", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    _line(pdf, "Patient", patient_name(ring, referral))
    _line(pdf, "Referral", referral.id)
    _line(pdf, "Referred by", referral.referring_doctor or "not recorded")
    _line(pdf, "Diagnosis", clinical_text(ring, referral).summary or "not recorded")
    period = "no sessions recorded"
    if outcome.start and outcome.end:
        period = f"{outcome.start.date().isoformat()} to {outcome.end.date().isoformat()}"
    _line(pdf, "Treatment period", period)
    if physio is not None:
        _line(pdf, "Physiotherapist", f"{physio.name} (licence {physio.license_number})")
    _line(
        pdf,
        "Sessions",
        f"{outcome.completed} completed of {outcome.prescribed} prescribed "
        f"(adherence {outcome.adherence})",
    )

    _heading(pdf, "Outcome measures")
    if outcome.initial_pain is not None:
        reduction = (
            f", {outcome.pain_reduction:g}% reduction" if outcome.pain_reduction is not None else ""
        )
        _line(
            pdf,
            "Pain (0-10)",
            f"initial {outcome.initial_pain:g}, final {outcome.final_pain:g}{reduction}",
        )
    if outcome.scale is not None:
        _line(
            pdf,
            f"Function ({outcome.scale})",
            f"initial {outcome.functional_initial:g}, final {outcome.functional_final:g}",
        )
    for measure in outcome.measures:
        _line(pdf, measure["recorded_at"].strftime("%Y-%m-%d"), _measure_text(measure))

    _heading(pdf, "Sessions")
    completed = [row for row in outcome.sessions if row.status == "completed"]
    if not completed:
        _line(pdf, "-", "No completed sessions.")
    for row in completed:
        seconds = duration_seconds(row) or 0
        assert row.check_in_at is not None  # completed sessions were checked in
        _line(
            pdf,
            f"Session {row.session_number}",
            f"{as_utc(row.check_in_at):%Y-%m-%d}, {row.modality.replace('_', ' ')}, "
            f"{seconds // 60} min, pain {row.pain_before} -> {row.pain_after}",
        )

    _heading(pdf, "Pain score chart")
    pdf.image(io.BytesIO(pain_chart_png(outcome.pain_points)), w=170)

    _heading(pdf, "Conclusion")
    pdf.set_font("DejaVu", size=10)
    pdf.multi_cell(0, 6, conclusion(referral, outcome), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.ln(2)
    pdf.set_font("DejaVu", size=8)
    pdf.cell(0, 5, f"Generated {as_utc(generated_at):%Y-%m-%d %H:%M} UTC")
    return bytes(pdf.output())
