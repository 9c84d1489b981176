"""Rendering referrals as the Shape G record (spec 2.4) and deriving ``current_status``.

``current_status`` is derived from the one Referral record (DESIGN decision):
``cancelled`` (status cancelled) > ``completed`` (closed, or every recommended session done) >
``in_treatment`` (a session scheduled, in progress or completed) > ``matched`` (a
physiotherapist assigned) > ``intake_completed`` (the patient finished the intake) >
``pending_intake``.

A record needs more than the referral row: its sessions, whether the intake was completed,
and the assigned physiotherapist. ``g_records`` loads those for a whole page at once, in at
most three queries whatever the page's length.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.clock import as_utc, iso
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.referrals.responses import AssignedPhysiotherapist, PatientCamel, ReferralRecordG
from rehabref.referrals.rows import ReferralRow
from rehabref.referrals.schemas_g import DEFAULT_SESSIONS, CurrentStatus
from rehabref.referrals.sealing import patient_identity
from rehabref.scope import PartnerScope, in_scope
from rehabref.tables.care import CareSession
from rehabref.tables.intake import AssistantSession
from rehabref.tables.matching import Physiotherapist

_care = table(CareSession)
_physios = table(Physiotherapist)
_assistant = table(AssistantSession)

ACTIVE_SESSION_STATES = frozenset({"scheduled", "in_progress", "completed"})

# Built once: built on every call, these cost more CPU than the per-referral queries they
# replace. The ids (a page's referrals, or their physiotherapists) expand into an IN list.
_SESSIONS = select(
    _care.c.referral_id, _care.c.status, _care.c.scheduled_at, _care.c.completed_at
).where(*in_scope(_care), _care.c.referral_id.in_(bindparam("ids", expanding=True)))
_COMPLETED_INTAKES = (
    select(_assistant.c.referral_id)
    .where(
        _assistant.c.referral_id.in_(bindparam("ids", expanding=True)),
        _assistant.c.completed_at.is_not(None),
    )
    .distinct()
)
_PHYSIOS = select(_physios).where(_physios.c.id.in_(bindparam("ids", expanding=True)))


@dataclass(frozen=True)
class Progress:
    intake_completed: bool
    sessions_completed: int
    sessions_active: int
    last_session_at: datetime | None
    next_session_at: datetime | None


@dataclass(frozen=True)
class _Session:
    status: str
    scheduled_at: datetime
    completed_at: datetime | None


def progress(intake_completed: bool, sessions: Sequence[_Session]) -> Progress:
    completed = [
        as_utc(s.completed_at)
        for s in sessions
        if s.status == "completed" and s.completed_at is not None
    ]
    upcoming = [as_utc(s.scheduled_at) for s in sessions if s.status == "scheduled"]
    return Progress(
        intake_completed=intake_completed,
        sessions_completed=sum(1 for s in sessions if s.status == "completed"),
        sessions_active=sum(1 for s in sessions if s.status in ACTIVE_SESSION_STATES),
        last_session_at=max(completed, default=None),
        next_session_at=min(upcoming, default=None),
    )


async def _sessions_of(
    conn: AsyncConnection, scope: PartnerScope, ids: Sequence[str]
) -> dict[str, list[_Session]]:
    found: dict[str, list[_Session]] = {referral_id: [] for referral_id in ids}
    rows = await conn.execute(_SESSIONS, scope.bind(ids=list(ids)))
    for referral_id, status, scheduled_at, completed_at in rows:
        found[referral_id].append(_Session(status, scheduled_at, completed_at))
    return found


async def _completed_intakes(conn: AsyncConnection, ids: Sequence[str]) -> set[str]:
    """Of these referrals (ids a scoped read returned), those whose intake was completed."""
    rows = await conn.execute(_COMPLETED_INTAKES, {"ids": list(ids)})
    return {referral_id for (referral_id,) in rows}


async def progress_of(
    conn: AsyncConnection, scope: PartnerScope, rows: Sequence[ReferralRow]
) -> dict[str, Progress]:
    """Each referral's progress, by id: two queries for any number of referrals."""
    ids = [row.id for row in rows]
    if not ids:
        return {}
    sessions = await _sessions_of(conn, scope, ids)
    completed_intakes = await _completed_intakes(conn, ids)
    return {
        referral_id: progress(referral_id in completed_intakes, sessions[referral_id])
        for referral_id in ids
    }


def sessions_total(row: ReferralRow) -> int:
    return int(row.recommended_sessions or DEFAULT_SESSIONS)


def current_status(row: ReferralRow, progress: Progress) -> CurrentStatus:
    if row.status == "cancelled":
        return "cancelled"
    if row.status == "closed" or progress.sessions_completed >= sessions_total(row):
        return "completed"
    if progress.sessions_active > 0 or row.status in {"booked", "attended", "paid"}:
        return "in_treatment"
    if row.assigned_physio_id is not None:
        return "matched"
    if progress.intake_completed:
        return "intake_completed"
    return "pending_intake"


async def _physiotherapists(
    conn: AsyncConnection, rows: Sequence[ReferralRow]
) -> dict[str, AssignedPhysiotherapist]:
    """The assigned physiotherapists (a registry shared by every partner), by id."""
    ids = {row.assigned_physio_id for row in rows if row.assigned_physio_id is not None}
    if not ids:
        return {}
    found = await conn.execute(_PHYSIOS, {"ids": sorted(ids)})
    result: dict[str, AssignedPhysiotherapist] = {}
    for physio in found:
        specializations = list(physio.specializations or [])
        result[physio.id] = AssignedPhysiotherapist(
            name=physio.name,
            licenseNumber=physio.license_number,
            specialization=specializations[0] if specializations else None,
            rating=float(physio.rating),
            phone=physio.phone,
        )
    return result


async def g_records(
    conn: AsyncConnection,
    scope: PartnerScope,
    rows: Sequence[ReferralRow],
    *,
    ring: KeyRing,
    base_url: str,
) -> list[ReferralRecordG]:
    """The Shape G records of ``rows`` (found in ``scope``), in their order: at most three
    queries for the whole page."""
    progress_by_id = await progress_of(conn, scope, rows)
    physios = await _physiotherapists(conn, rows)
    return [
        _record(
            ring,
            row,
            progress_by_id[row.id],
            None if row.assigned_physio_id is None else physios.get(row.assigned_physio_id),
            base_url,
        )
        for row in rows
    ]


def _record(
    ring: KeyRing,
    row: ReferralRow,
    progress: Progress,
    physio: AssignedPhysiotherapist | None,
    base_url: str,
) -> ReferralRecordG:
    code = row.tracking_code or row.id
    person = patient_identity(ring, row)
    return ReferralRecordG(
        status="success",
        referral_id=row.id,
        tracking_code=code,
        partner_reference=row.partner_reference,
        tracking_url=f"{base_url}/track/{code}",
        current_status=current_status(row, progress),
        patient=PatientCamel(
            firstName=person.first_name,
            lastName=person.last_name,
            phone=person.phone,
            city=row.patient_city,
        ),
        assigned_physiotherapist=physio,
        sessions_completed=progress.sessions_completed,
        sessions_total=sessions_total(row),
        last_session_at=iso(progress.last_session_at),
        next_session_at=iso(progress.next_session_at),
        created_at=iso(as_utc(row.created_at)),
    )
