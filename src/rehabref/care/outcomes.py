"""The clinical outcome report (spec 2.7): metrics from recorded sessions and assessments.

Rules (docs/outcomes.md restates them):
- Pain series: every completed session gives two points (pain_before at check-in,
  pain_after at check-out); every NPRS or VAS assessment gives one point at its time.
  initial = earliest point, final = latest point.
- pain_reduction_percentage = (initial - final) / initial * 100, rounded half-up to one
  decimal (negative when pain rose); null when there is no pain data or initial is 0
  (a reduction from zero pain is undefined).
- Functional score: the first available of PSFS (mean of 3 tasks, 0-10, higher is better),
  ODI, NDI (percent, lower is better); initial = first, final = last of that scale.
- prescribed = the referral's recommended_sessions (default 4); adherence = completed /
  prescribed as a whole percentage, half-up, not capped ("75%", "125%"); "0%" if 0 prescribed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.care.assessments import list_assessments
from rehabref.care.responses import OutcomeReport, ReportMetrics, SessionsSummary, TreatmentPeriod
from rehabref.care.rows import CareSessionRow
from rehabref.clock import as_utc
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.referrals.rows import ReferralRow
from rehabref.referrals.sealing import clinical_text, patient_identity
from rehabref.scope import PartnerScope
from rehabref.tables.care import CareSession

DEFAULT_PRESCRIBED = 4
FUNCTIONAL_SCALES = ("psfs", "odi", "ndi")
SCALE_NAMES = {
    "psfs": "PSFS",
    "odi": "ODI",
    "ndi": "NDI",
    "nprs": "NPRS",
    "vas": "VAS",
    "rom": "ROM",
}
_sessions = table(CareSession)


def pain_reduction_percentage(initial: float | None, final: float | None) -> float | None:
    if initial is None or final is None or initial == 0:
        return None
    exact = (Decimal(str(initial)) - Decimal(str(final))) * 100 / Decimal(str(initial))
    return float(exact.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def adherence_rate(completed: int, prescribed: int) -> str:
    if prescribed <= 0:
        return "0%"
    # Integer half-up rounding of completed * 100 / prescribed.
    return f"{(completed * 200 + prescribed) // (2 * prescribed)}%"


@dataclass
class Outcome:
    """Everything the JSON report and the PDF show."""

    pain_points: list[tuple[datetime, float]] = field(default_factory=list)
    initial_pain: float | None = None
    final_pain: float | None = None
    pain_reduction: float | None = None
    scale: str | None = None
    functional_initial: float | None = None
    functional_final: float | None = None
    prescribed: int = DEFAULT_PRESCRIBED
    completed: int = 0
    adherence: str = "0%"
    start: datetime | None = None
    end: datetime | None = None
    measures: list[dict[str, Any]] = field(default_factory=list)
    sessions: list[CareSessionRow] = field(default_factory=list)


def compute(
    referral: ReferralRow, sessions: list[CareSessionRow], assessments: Sequence[Any]
) -> Outcome:
    """``assessments``: rows with their answers opened (``assessments.list_assessments``)."""
    result = Outcome()
    completed = [row for row in sessions if row.status == "completed"]
    points: list[tuple[datetime, int, float]] = []  # (time, order, score)
    for row in completed:
        # complete_session writes both times and both scores of every completed session.
        assert row.check_in_at is not None and row.check_out_at is not None
        assert row.pain_before is not None and row.pain_after is not None
        points.append((as_utc(row.check_in_at), 0, float(row.pain_before)))
        points.append((as_utc(row.check_out_at), 1, float(row.pain_after)))
    for item in assessments:
        if item.scale in {"nprs", "vas"}:
            points.append((as_utc(item.recorded_at), 0, float(item.score)))
    points.sort(key=lambda point: (point[0], point[1]))
    result.pain_points = [(when, score) for when, _, score in points]
    if points:
        result.initial_pain, result.final_pain = points[0][2], points[-1][2]
    result.pain_reduction = pain_reduction_percentage(result.initial_pain, result.final_pain)
    for scale in FUNCTIONAL_SCALES:
        found = [item for item in assessments if item.scale == scale]
        if found:
            result.scale = SCALE_NAMES[scale]
            result.functional_initial = float(found[0].score)
            result.functional_final = float(found[-1].score)
            break
    recommended = referral.recommended_sessions
    result.prescribed = DEFAULT_PRESCRIBED if recommended is None else int(recommended)
    result.completed = len(completed)
    result.adherence = adherence_rate(result.completed, result.prescribed)
    times = [when for when, _, _ in points] + [as_utc(item.recorded_at) for item in assessments]
    if times:
        result.start, result.end = min(times), max(times)
    result.measures = [
        {
            "scale": SCALE_NAMES[item.scale],
            "score": float(item.score),
            "detail": item.detail,
            "recorded_at": as_utc(item.recorded_at),
        }
        for item in assessments
    ]
    result.sessions = sessions
    return result


def _trend(initial: float, final: float, higher_is_better: bool) -> str:
    if final == initial:
        return "was unchanged"
    better = final > initial if higher_is_better else final < initial
    return "improved" if better else "worsened"


def conclusion(referral: ReferralRow, outcome: Outcome) -> str:
    if outcome.completed == 0:
        text = "No treatment sessions have been completed yet."
    else:
        text = (
            f"{outcome.completed} of {outcome.prescribed} prescribed sessions completed "
            f"(adherence {outcome.adherence})."
        )
    if outcome.initial_pain is not None and outcome.final_pain is not None:
        trend = _trend(outcome.initial_pain, outcome.final_pain, higher_is_better=False)
        text += f" Pain {trend} from {outcome.initial_pain:g}/10 to {outcome.final_pain:g}/10" + (
            f" ({outcome.pain_reduction:g}% reduction)."
            if outcome.pain_reduction is not None
            else "."
        )
    if outcome.functional_initial is not None and outcome.functional_final is not None:
        trend = _trend(
            outcome.functional_initial, outcome.functional_final, outcome.scale == "PSFS"
        )
        text += (
            f" Function ({outcome.scale}) {trend} from {outcome.functional_initial:g} "
            f"to {outcome.functional_final:g}."
        )
    text += " Discharged." if referral.status == "closed" else " Treatment ongoing."
    return text


def patient_name(ring: KeyRing, referral: ReferralRow) -> str:
    return patient_identity(ring, referral).full_name


async def load_outcome(conn: AsyncConnection, ring: KeyRing, referral: ReferralRow) -> Outcome:
    sessions = list(
        (
            await conn.execute(
                PartnerScope.owning(referral)
                .select(_sessions)
                .where(_sessions.c.referral_id == referral.id)
                .order_by(_sessions.c.session_number)
            )
        ).all()
    )
    measures = await list_assessments(conn, ring, referral_id=referral.id)
    return compute(referral, sessions, measures)


def report_body(
    ring: KeyRing, referral: ReferralRow, outcome: Outcome, *, pdf_url: str
) -> OutcomeReport:
    return OutcomeReport(
        referral_id=referral.id,
        patient_name=patient_name(ring, referral),
        referring_doctor=referral.referring_doctor,
        diagnosis=clinical_text(ring, referral).summary,
        treatment_period=TreatmentPeriod(
            start_date=outcome.start.date().isoformat() if outcome.start else None,
            discharge_date=outcome.end.date().isoformat() if outcome.end else None,
        ),
        metrics=ReportMetrics(
            initial_pain_score=outcome.initial_pain,
            final_pain_score=outcome.final_pain,
            pain_reduction_percentage=outcome.pain_reduction,
            functional_score_initial=outcome.functional_initial,
            functional_score_final=outcome.functional_final,
            scale_used=outcome.scale,
        ),
        sessions_summary=SessionsSummary(
            prescribed=outcome.prescribed,
            completed=outcome.completed,
            adherence_rate=outcome.adherence,
        ),
        clinical_conclusion=conclusion(referral, outcome),
        discharge_summary_pdf_url=pdf_url,
    )
