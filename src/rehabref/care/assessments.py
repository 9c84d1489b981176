"""Outcome measures recorded by coordinators: PSFS, NDI, ODI, NPRS, VAS, range of motion."""

from __future__ import annotations

from datetime import datetime
from types import SimpleNamespace
from typing import Any

from pydantic import ValidationError
from sqlalchemy import Row, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.care.schemas import (
    AssessmentBody,
    DisabilityIndexAssessment,
    NprsAssessment,
    PsfsAssessment,
    RomAssessment,
    VasAssessment,
    parse_time,
)
from rehabref.care.sealing import assessment_detail, sealed_detail
from rehabref.clock import iso, utcnow
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.errors import ApiError
from rehabref.ids import new_id
from rehabref.request_body import field_errors
from rehabref.tables.care import Assessment, CareSession
from rehabref.tables.referrals import Referral

assessments = table(Assessment)
_sessions = table(CareSession)
_referrals = table(Referral)
_SCALES = ("psfs", "ndi", "odi", "nprs", "vas", "rom")

AnyAssessment = (
    PsfsAssessment | DisabilityIndexAssessment | NprsAssessment | VasAssessment | RomAssessment
)


def validate_assessment(body: dict[str, Any]) -> AnyAssessment:
    """The body as one assessment model; 422 with plain field paths (no union tag)."""
    try:
        return AssessmentBody.model_validate(body).root
    except ValidationError as exc:
        problems: dict[str, str] = {}
        for path, message in field_errors(exc).items():
            head, _, rest = path.partition(".")
            if path == "body":
                problems["scale"] = f"Must be one of: {', '.join(_SCALES)}."
            else:
                problems[rest if head in _SCALES and rest else path] = message
        raise ApiError(
            422, "validation_error", "Some fields are invalid; see error.fields.", fields=problems
        ) from None


def headline(item: AnyAssessment) -> tuple[float, dict[str, Any]]:
    """The stored score and detail of an assessment."""
    if isinstance(item, PsfsAssessment):
        scores = [task.score for task in item.tasks]
        detail = {"tasks": [task.model_dump() for task in item.tasks]}
        return round(sum(scores) / len(scores), 2), detail
    if isinstance(item, DisabilityIndexAssessment):
        return float(item.raw_score * 2), {"raw_score": item.raw_score, "unit": "percent"}
    if isinstance(item, NprsAssessment | VasAssessment):
        return float(item.score), {}
    return float(item.degrees), {"joint": item.joint, "movement": item.movement, "side": item.side}


async def record_assessment(
    conn: AsyncConnection, ring: KeyRing, *, referral_id: str, item: AnyAssessment, actor: str
) -> SimpleNamespace:
    """The assessment's answers are stored sealed under ``ring`` (care/sealing.py)."""
    exists = (
        await conn.execute(select(_referrals.c.id).where(_referrals.c.id == referral_id))
    ).first()
    if exists is None:
        raise ApiError(404, "not_found", "No referral with this identifier.")
    if item.session_id is not None:
        owner = (
            await conn.execute(
                select(_sessions.c.referral_id).where(_sessions.c.id == item.session_id)
            )
        ).scalar_one_or_none()
        if owner != referral_id:
            raise ApiError(
                422,
                "validation_error",
                "Some fields are invalid; see error.fields.",
                fields={"session_id": "Not a session of this referral."},
            )
    now = utcnow()
    recorded_at: datetime = parse_time(item.recorded_at) if item.recorded_at else now
    score, detail = headline(item)
    assessment_id = new_id("asm")
    await conn.execute(
        insert(assessments),
        {
            "id": assessment_id,
            "referral_id": referral_id,
            "session_id": item.session_id,
            "scale": item.scale,
            "score": score,
            "detail": sealed_detail(ring, detail),
            "recorded_at": recorded_at,
            "created_by": actor,
            "created_at": now,
        },
    )
    row = (await conn.execute(select(assessments).where(assessments.c.id == assessment_id))).one()
    return opened_assessment(ring, row)


def opened_assessment(ring: KeyRing, row: Row[Any]) -> SimpleNamespace:
    """An ``assessments`` row read by attribute, its answers opened into a dict."""
    return SimpleNamespace(**{**row._mapping, "detail": assessment_detail(ring, row.detail)})


async def list_assessments(
    conn: AsyncConnection, ring: KeyRing, *, referral_id: str
) -> list[SimpleNamespace]:
    """The referral's assessments in recorded order, their answers opened."""
    found = await conn.execute(
        select(assessments)
        .where(assessments.c.referral_id == referral_id)
        .order_by(assessments.c.recorded_at, assessments.c.id)
    )
    return [opened_assessment(ring, row) for row in found.all()]


def assessment_view(row: SimpleNamespace) -> dict[str, Any]:
    """An assessment as the ops API shows it (``row`` opened: ``opened_assessment``)."""
    return {
        "assessment_id": row.id,
        "referral_id": row.referral_id,
        "session_id": row.session_id,
        "scale": row.scale,
        "score": row.score,
        "detail": row.detail,
        "recorded_at": iso(row.recorded_at),
    }
