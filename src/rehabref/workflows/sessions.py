"""A therapy session is completed: the session record and ``session.completed`` (care), then
one session charged to the member's HMO allowance for direct-billing referrals (eligibility),
in one transaction.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.care import sessions
from rehabref.eligibility.adapters import CoverageSources
from rehabref.eligibility.service import consume_session


async def complete_session(
    conn: AsyncConnection,
    *,
    coverage: CoverageSources,
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
) -> Row[Any]:
    done = await sessions.complete_session(
        conn,
        session_id=session_id,
        pain_before=pain_before,
        pain_after=pain_after,
        notes_summary=notes_summary,
        check_out_at=check_out_at,
        check_out_lat=check_out_lat,
        check_out_lng=check_out_lng,
        actor=actor,
        check_out_accuracy_m=check_out_accuracy_m,
        check_out_refused=check_out_refused,
    )
    await consume_session(conn, referral_id=done.referral_id, coverage=coverage, session_id=done.id)
    return done
