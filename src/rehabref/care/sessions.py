"""Therapy sessions: schedule, start (check-in), complete (check-out), cancel.

Statuses and moves (an illegal move is 409 ``invalid_transition``)::

    scheduled   -> in_progress | cancelled
    in_progress -> completed | cancelled
    completed, cancelled: terminal

Completing writes ``session.completed`` in the same transaction: duration, GPS check-in
verification, invoice reference (the payer invoice's line for HMO and employer billing, given
by the workflow; the partner's monthly numbering otherwise); clinical partners (contract
``g``) also get the pain scores, pain reduction and notes summary. Services never commit.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.care.gps import verify_check_in
from rehabref.care.invoices import next_invoice_reference
from rehabref.care.rows import CareSessionRow
from rehabref.care.sealing import sealed_cancel_reason, sealed_session_notes
from rehabref.clock import as_utc, iso, utcnow
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.errors import ApiError
from rehabref.events.outbox import NewEvent, record_events
from rehabref.ids import new_id
from rehabref.referrals.event_data import callback_targets, contract_of, referral_base
from rehabref.referrals.transitions import lock_referral
from rehabref.tables.care import CareSession
from rehabref.tables.matching import Physiotherapist

sessions = table(CareSession)
_physios = table(Physiotherapist)

ALLOWED: dict[str, frozenset[str]] = {
    "scheduled": frozenset({"in_progress", "cancelled"}),
    "in_progress": frozenset({"completed", "cancelled"}),
    "completed": frozenset(),
    "cancelled": frozenset(),
}
_CLOSED_REFERRAL = frozenset({"closed", "cancelled"})


def check_move(current: str, to: str) -> None:
    if to not in ALLOWED.get(current, frozenset()):
        raise ApiError(
            409,
            "invalid_transition",
            f"A session cannot move from {current} to {to}.",
            fields={"status": f"Currently {current}."},
        )


def _invalid(fields: dict[str, str]) -> ApiError:
    return ApiError(
        422, "validation_error", "Some fields are invalid; see error.fields.", fields=fields
    )


async def get_session(
    conn: AsyncConnection, *, session_id: str, lock: bool = False
) -> CareSessionRow:
    query = select(sessions).where(sessions.c.id == session_id)
    row = (await conn.execute(query.with_for_update() if lock else query)).first()
    if row is None:
        raise ApiError(404, "not_found", "No session with this identifier.")
    return row


async def schedule_session(
    conn: AsyncConnection,
    *,
    referral_id: str,
    scheduled_at: datetime,
    modality: str,
    session_type: str,
    actor: str,
    physio_id: str | None = None,
    location: tuple[float, float] | None = None,
) -> str:
    referral = await lock_referral(conn, referral_id)
    if referral is None:
        raise ApiError(404, "not_found", "No referral with this identifier.")
    if referral.status in _CLOSED_REFERRAL:
        raise ApiError(
            409, "invalid_transition", f"The referral is {referral.status}; no new sessions."
        )
    physio_id = physio_id or referral.assigned_physio_id
    if physio_id is None:
        raise _invalid(
            {"physio_id": "The referral has no assigned physiotherapist; match it or send one."}
        )
    physio = (
        await conn.execute(
            select(_physios.c.active, _physios.c.environment, _physios.c.partner_id).where(
                _physios.c.id == physio_id
            )
        )
    ).first()
    # The live registry for live referrals, the partner's own sandbox roster for test ones.
    in_roster = physio is not None and (
        physio.environment == referral.environment
        and physio.partner_id in (None, referral.partner_id)
    )
    if physio is None or not in_roster or not physio.active:
        raise _invalid({"physio_id": "No active physiotherapist with this identifier."})
    last = (
        await conn.execute(
            select(func.max(sessions.c.session_number)).where(sessions.c.referral_id == referral_id)
        )
    ).scalar_one_or_none()
    now = utcnow()
    session_id = new_id("ses")
    await conn.execute(
        insert(sessions),
        {
            "id": session_id,
            "referral_id": referral_id,
            "partner_id": referral.partner_id,
            "environment": referral.environment,
            "physio_id": physio_id,
            "session_number": (last or 0) + 1,
            "session_type": session_type,
            "modality": modality,
            "status": "scheduled",
            "scheduled_at": scheduled_at,
            "location_lat": location[0] if location else None,
            "location_lng": location[1] if location else None,
            "created_by": actor,
            "updated_by": actor,
            "created_at": now,
            "updated_at": now,
        },
    )
    return session_id


def _point(
    modality: str, lat: float | None, lng: float | None, prefix: str, refused: bool = False
) -> tuple[float, float] | None:
    if lat is None and lng is None:
        if modality == "remote" or refused:
            return None
        raise _invalid(
            {
                f"{prefix}_lat": "GPS coordinates are required for face-to-face sessions.",
                f"{prefix}_lng": "GPS coordinates are required for face-to-face sessions.",
            }
        )
    if lat is None or lng is None:
        missing = f"{prefix}_lat" if lat is None else f"{prefix}_lng"
        raise _invalid({missing: "Send both latitude and longitude."})
    return lat, lng


async def start_session(
    conn: AsyncConnection,
    *,
    session_id: str,
    check_in_at: datetime,
    check_in_lat: float | None,
    check_in_lng: float | None,
    actor: str,
    accuracy_m: float | None = None,
    refusal: str | None = None,
) -> CareSessionRow:
    """Check in; ``refusal`` says why the device gave no position (the check-in is then
    recorded without one and verifies as ``location_refused``)."""
    row = await get_session(conn, session_id=session_id, lock=True)
    check_move(row.status, "in_progress")
    point = _point(row.modality, check_in_lat, check_in_lng, "check_in", refused=bool(refusal))
    await conn.execute(
        update(sessions)
        .where(sessions.c.id == session_id)
        .values(
            status="in_progress",
            check_in_at=check_in_at,
            check_in_lat=point[0] if point else None,
            check_in_lng=point[1] if point else None,
            check_in_accuracy_m=accuracy_m if point else None,
            check_in_refusal=None if point else refusal,
            updated_by=actor,
            updated_at=utcnow(),
        )
    )
    return await get_session(conn, session_id=session_id)


def _pair(lat: float | None, lng: float | None) -> tuple[float, float] | None:
    """A stored point (latitude and longitude are written together), or None."""
    return None if lat is None or lng is None else (lat, lng)


def pain_reduction(before: int, after: int) -> dict[str, Any]:
    """Points and percent of the session's pain change (percent null when before is 0)."""
    percent = None if before == 0 else round((before - after) * 100 / before, 1)
    return {"points": before - after, "percentage": percent}


async def complete_session(
    conn: AsyncConnection,
    *,
    ring: KeyRing,
    session_id: str,
    pain_before: int,
    pain_after: int,
    notes_summary: str,
    check_out_at: datetime,
    check_out_lat: float | None,
    check_out_lng: float | None,
    actor: str,
    check_out_accuracy_m: float | None = None,
    check_out_refused: bool = False,
    invoice_reference: str | None = None,
) -> CareSessionRow:
    """``invoice_reference``: the payer invoice's line when an HMO or employer is billed
    (workflows/sessions.py); otherwise the partner's own monthly numbering (invoices.py).
    The notes are stored sealed under ``ring``; the event carries them opened."""
    row = await get_session(conn, session_id=session_id, lock=True)
    check_move(row.status, "completed")
    point = _point(row.modality, check_out_lat, check_out_lng, "check_out", check_out_refused)
    assert row.check_in_at is not None  # in progress: checked in (check_move above)
    check_in_at = as_utc(row.check_in_at)
    if as_utc(check_out_at) < check_in_at:
        raise _invalid({"check_out_at": "Must not be before the check-in time."})
    referral = await lock_referral(conn, row.referral_id)
    assert referral is not None  # foreign key
    check_in = _pair(row.check_in_lat, row.check_in_lng)
    location = _pair(row.location_lat, row.location_lng)
    gps = verify_check_in(
        modality=row.modality,
        check_in=check_in,
        scheduled_location=location,
        city=referral.patient_city,
        area=referral.patient_area,
        accuracy_m=row.check_in_accuracy_m,
        refused=row.check_in_refusal is not None,
    )
    invoice = invoice_reference or await next_invoice_reference(
        conn, partner_id=row.partner_id, environment=row.environment, when=check_out_at
    )
    await conn.execute(
        update(sessions)
        .where(sessions.c.id == session_id)
        .values(
            status="completed",
            pain_before=pain_before,
            pain_after=pain_after,
            notes_summary=sealed_session_notes(ring, notes_summary),
            check_out_at=check_out_at,
            check_out_lat=point[0] if point else None,
            check_out_lng=point[1] if point else None,
            check_out_accuracy_m=check_out_accuracy_m if point else None,
            completed_at=check_out_at,
            gps_check=gps,
            invoice_reference=invoice,
            updated_by=actor,
            updated_at=utcnow(),
        )
    )
    done = await get_session(conn, session_id=session_id)
    provider = await provider_name(conn, done.physio_id)
    clinical = await contract_of(conn, referral.partner_id) == "g"
    data = referral_base(referral)
    data.update(
        completed_event_data(
            done, provider=provider, gps=gps, clinical=clinical, notes_summary=notes_summary
        )
    )
    await record_events(
        conn,
        ring,
        partner_id=referral.partner_id,
        environment=referral.environment,
        events=[
            NewEvent(
                "session.completed",
                data,
                referral.id,
                extra_targets=callback_targets(referral),
            )
        ],
    )
    return done


def duration_seconds(row: CareSessionRow) -> int | None:
    if row.check_in_at is None or row.check_out_at is None:
        return None
    return int((as_utc(row.check_out_at) - as_utc(row.check_in_at)).total_seconds())


def completed_event_data(
    row: CareSessionRow,
    *,
    provider: str,
    gps: dict[str, Any],
    clinical: bool,
    notes_summary: str | None,
) -> dict[str, Any]:
    """``notes_summary``: the session's notes as written (the row holds them sealed)."""
    seconds = duration_seconds(row) or 0
    data: dict[str, Any] = {
        "session_id": row.id,
        "session_number": row.session_number,
        "session_type": row.session_type,
        "modality": row.modality,
        "provider_name": provider,
        "scheduled_at": iso(row.scheduled_at),
        "check_in_at": iso(row.check_in_at),
        "check_out_at": iso(row.check_out_at),
        "completed_at": iso(row.completed_at),
        "duration_seconds": seconds,
        "duration_minutes": round(seconds / 60, 1),
        "gps_check_in": gps,
        "invoice_reference": row.invoice_reference,
    }
    if clinical:
        data["clinical_summary"] = {
            "pain_score_before": row.pain_before,
            "pain_score_after": row.pain_after,
            "pain_reduction": (
                None
                if row.pain_before is None or row.pain_after is None
                else pain_reduction(row.pain_before, row.pain_after)
            ),
            "notes_summary": notes_summary,
        }
    return data


async def cancel_session(
    conn: AsyncConnection, *, session_id: str, reason: str, actor: str, ring: KeyRing
) -> CareSessionRow:
    row = await get_session(conn, session_id=session_id, lock=True)
    check_move(row.status, "cancelled")
    await conn.execute(
        update(sessions)
        .where(sessions.c.id == session_id)
        .values(
            status="cancelled",
            cancel_reason=sealed_cancel_reason(ring, reason),
            updated_by=actor,
            updated_at=utcnow(),
        )
    )
    return await get_session(conn, session_id=session_id)


async def move_session(
    conn: AsyncConnection, *, session_id: str, scheduled_at: datetime, actor: str
) -> None:
    """A rescheduled visit: its scheduled session moves with it."""
    row = await get_session(conn, session_id=session_id, lock=True)
    check_move(row.status, "in_progress")  # only a session that has not started moves
    await conn.execute(
        update(sessions)
        .where(sessions.c.id == session_id)
        .values(scheduled_at=scheduled_at, updated_by=actor, updated_at=utcnow())
    )


async def provider_name(conn: AsyncConnection, physio_id: str) -> str:
    name = (
        await conn.execute(select(_physios.c.name).where(_physios.c.id == physio_id))
    ).scalar_one()
    return str(name)
