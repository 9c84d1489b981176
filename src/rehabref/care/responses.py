"""The partner care answers as msgspec Structs: the session list (spec 2.6) and the outcome
report (4.6), the bodies the API encodes and the schemas the OpenAPI document shows
(``openapi/care.py``).

Field order is the JSON key order; a None field is written as ``null``, an ``UNSET`` one is
left out (the clinical fields for ``v1`` partners).
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from rehabref.care.schemas import Modality, SessionStatus

_CLINICAL = "Contract g only (omitted for v1); null until completed."


class SessionItem(msgspec.Struct, frozen=True):
    """Spec 2.6. The clinical fields are present only for clinical (contract ``g``) partners."""

    session_id: str
    session_number: int
    session_type: str
    scheduled_at: str
    completed_at: str | None
    status: SessionStatus
    provider_name: str
    modality: Modality
    pain_score_before: Annotated[int | UnsetType | None, msgspec.Meta(description=_CLINICAL)] = (
        UNSET
    )
    pain_score_after: Annotated[int | UnsetType | None, msgspec.Meta(description=_CLINICAL)] = UNSET
    notes_summary: Annotated[str | UnsetType | None, msgspec.Meta(description=_CLINICAL)] = UNSET


class SessionList(msgspec.Struct, frozen=True):
    total_sessions: int
    sessions: list[SessionItem]


class TreatmentPeriod(msgspec.Struct, frozen=True):
    start_date: str | None
    discharge_date: str | None


class ReportMetrics(msgspec.Struct, frozen=True):
    initial_pain_score: float | None
    final_pain_score: float | None
    pain_reduction_percentage: Annotated[
        float | None,
        msgspec.Meta(
            description="(initial - final) / initial * 100, one decimal; null when initial is 0."
        ),
    ]
    functional_score_initial: float | None
    functional_score_final: float | None
    scale_used: str | None


class SessionsSummary(msgspec.Struct, frozen=True):
    prescribed: int
    completed: int
    adherence_rate: str


class OutcomeReport(msgspec.Struct, frozen=True):
    referral_id: str
    patient_name: str
    referring_doctor: str | None
    diagnosis: str | None
    treatment_period: TreatmentPeriod
    metrics: ReportMetrics
    sessions_summary: SessionsSummary
    clinical_conclusion: str
    discharge_summary_pdf_url: str
