"""Rendering a referral as the Shape G record (spec 2.4) and deriving ``current_status``.

``current_status`` is derived from the one Referral record (DESIGN decision):
``cancelled`` (status cancelled) > ``completed`` (closed, or every recommended session done) >
``in_treatment`` (a session scheduled, in progress or completed) > ``matched`` (a
physiotherapist assigned) > ``intake_completed`` (the patient finished the intake) >
``pending_intake``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Row, select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.clock import as_utc, iso
from rehabref.db import table
from rehabref.referrals.schemas_g import DEFAULT_SESSIONS
from rehabref.result_rows import RowLike
from rehabref.tables.care import CareSession
from rehabref.tables.intake import AssistantSession
from rehabref.tables.matching import Physiotherapist

_care = table(CareSession)
_physios = table(Physiotherapist)
_assistant = table(AssistantSession)

ACTIVE_SESSION_STATES = frozenset({"scheduled", "in_progress", "completed"})


@dataclass(frozen=True)
class Progress:
    intake_completed: bool
    sessions_completed: int
    sessions_active: int
    last_session_at: datetime | None
    next_session_at: datetime | None


async def progress_of(conn: AsyncConnection, referral_id: str) -> Progress:
    sessions = (
        await conn.execute(
            select(_care.c.status, _care.c.scheduled_at, _care.c.completed_at).where(
                _care.c.referral_id == referral_id
            )
        )
    ).all()
    intake = (
        await conn.execute(
            select(_assistant.c.id)
            .where(_assistant.c.referral_id == referral_id, _assistant.c.completed_at.is_not(None))
            .limit(1)
        )
    ).first()
    completed = [as_utc(s.completed_at) for s in sessions if s.status == "completed"]
    upcoming = [as_utc(s.scheduled_at) for s in sessions if s.status == "scheduled"]
    return Progress(
        intake_completed=intake is not None,
        sessions_completed=sum(1 for s in sessions if s.status == "completed"),
        sessions_active=sum(1 for s in sessions if s.status in ACTIVE_SESSION_STATES),
        last_session_at=max((c for c in completed if c is not None), default=None),
        next_session_at=min(upcoming, default=None),
    )


def sessions_total(row: Row[Any]) -> int:
    return int(row.recommended_sessions or DEFAULT_SESSIONS)


def current_status(row: Row[Any], progress: Progress) -> str:
    if row.status == "cancelled":
        return "cancelled"
    if row.status == "closed" or progress.sessions_completed >= sessions_total(row):
        return "completed"
    if progress.sessions_active > 0 or row.status in {"booked", "attended", "paid"}:
        return "in_treatment"
    if getattr(row, "assigned_physio_id", None) is not None:
        return "matched"
    if progress.intake_completed:
        return "intake_completed"
    return "pending_intake"


async def physiotherapist(conn: AsyncConnection, row: Row[Any]) -> dict[str, Any] | None:
    physio_id = getattr(row, "assigned_physio_id", None)
    if physio_id is None:
        return None
    physio = (await conn.execute(select(_physios).where(_physios.c.id == physio_id))).first()
    if physio is None:
        return None
    specializations = list(physio.specializations or [])
    return {
        "name": physio.name,
        "licenseNumber": physio.license_number,
        "specialization": specializations[0] if specializations else None,
        "rating": float(physio.rating),
        "phone": physio.phone,
    }


async def g_record(conn: AsyncConnection, row: RowLike, *, base_url: str) -> dict[str, Any]:
    progress = await progress_of(conn, row.id)
    code = row.tracking_code or row.id
    return {
        "status": "success",
        "referral_id": row.id,
        "tracking_code": code,
        "partner_reference": row.partner_reference,
        "tracking_url": f"{base_url}/track/{code}",
        "current_status": current_status(row, progress),
        "patient": {
            "firstName": row.patient_first_name,
            "lastName": row.patient_last_name,
            "phone": row.patient_phone,
            "city": row.patient_city,
        },
        "assigned_physiotherapist": await physiotherapist(conn, row),
        "sessions_completed": progress.sessions_completed,
        "sessions_total": sessions_total(row),
        "last_session_at": iso(progress.last_session_at),
        "next_session_at": iso(progress.next_session_at),
        "created_at": iso(as_utc(row.created_at)),
    }
