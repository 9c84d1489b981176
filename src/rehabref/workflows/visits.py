"""A physiotherapist checks in to a visit from the app: the care session starts with the
device's position (or the device's refusal, recorded as such), and the referral's booked
visit becomes attended (``appointment.attended``), never before its booked time.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.care import sessions
from rehabref.care.availability_store import appointments
from rehabref.care.rows import CareSessionRow
from rehabref.clock import as_utc, iso
from rehabref.crypto import KeyRing
from rehabref.errors import ApiError
from rehabref.referrals.transitions import lock_referral
from rehabref.workflows import moves


async def check_in(
    conn: AsyncConnection,
    *,
    session_id: str,
    actor: str,
    point: tuple[float, float] | None,
    accuracy_m: float | None,
    refusal: str | None,
    ring: KeyRing,
    now: datetime,
) -> CareSessionRow:
    row = await sessions.get_session(conn, session_id=session_id)
    if as_utc(now) < as_utc(row.scheduled_at):
        raise ApiError(
            409,
            "invalid_transition",
            f"Check-in opens at the visit's booked time ({iso(row.scheduled_at)}).",
        )
    started = await sessions.start_session(
        conn,
        session_id=session_id,
        check_in_at=now,
        check_in_lat=point[0] if point else None,
        check_in_lng=point[1] if point else None,
        actor=actor,
        accuracy_m=accuracy_m,
        refusal=refusal,
    )
    booked = (
        await conn.execute(
            select(appointments.c.id).where(
                appointments.c.session_id == session_id, appointments.c.status == "booked"
            )
        )
    ).first()
    referral = await lock_referral(conn, row.referral_id)
    if booked is not None and referral is not None and referral.status == "booked":
        how = "device position" if point else f"no position: {refusal}"
        await moves.move_referral(
            conn,
            referral_id=row.referral_id,
            to="attended",
            actor=actor,
            reason=f"checked in from the physiotherapist app ({how})",
            ring=ring,
            now=now,
            attended_via="check_in",
        )
    return started
