"""Giving a referral a physiotherapist: run matching now, or a coordinator's choice.

The ops API (``POST /api/v1/ops/referrals/{id}/match``) and the console call these, so both
have the same rules, events (``provider.matched``), assignment record and audit record.

Threat: a referral handed to a physiotherapist outside its roster (a test referral to a real
physiotherapist, or the reverse), to an inactive one, or silently: a manual assignment needs
the coordinator's reason, and every assignment is recorded with who made it.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.audit.trail import entry, record
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.errors import ApiError
from rehabref.matching.assignments import record_assignment
from rehabref.matching.roster import RosterSources, in_scope
from rehabref.matching.service import assign, match_referral
from rehabref.referrals.status import TERMINAL
from rehabref.referrals.tasks import resolve_tasks
from rehabref.referrals.transitions import lock_referral
from rehabref.tables.matching import Physiotherapist

REASON_MAX = 500
_physios = table(Physiotherapist)


async def match_now(
    conn: AsyncConnection,
    *,
    roster: RosterSources,
    ring: KeyRing,
    referral_id: str,
    actor: str,
    now: datetime,
) -> str | None:
    """Run matching for one referral (idempotent: an assigned referral keeps its
    physiotherapist); the physiotherapist's id, or None (an ``unmatched`` task is open)."""
    physio_id = await match_referral(
        conn, roster=roster, ring=ring, referral_id=referral_id, now=now, actor=actor
    )
    if physio_id is not None:
        await resolve_tasks(
            conn, referral_id=referral_id, purpose="unmatched", outcome="matched", now=now
        )
    await record(conn, entry(actor, "referral.matched", referral_id=referral_id, subject=physio_id))
    return physio_id


async def assign_physio(
    conn: AsyncConnection,
    *,
    ring: KeyRing,
    referral_id: str,
    physio_id: str,
    reason: str,
    actor: str,
    now: datetime,
) -> None:
    """A coordinator gives (or moves) the referral to ``physio_id``, saying why; 404, 409
    (ended referral, already this physiotherapist) or 422 (no reason, not in its roster)."""
    if not reason.strip():
        raise ApiError(
            422,
            "validation_error",
            "Say why you assign this physiotherapist.",
            fields={"reason": "Required."},
        )
    referral = await lock_referral(conn, referral_id)
    if referral is None:
        raise ApiError(404, "not_found", "No referral with this identifier.")
    if referral.status in TERMINAL:
        raise ApiError(409, "invalid_transition", f"The referral is {referral.status}.")
    physio = (
        await conn.execute(
            select(_physios).where(
                _physios.c.id == physio_id,
                in_scope(environment=referral.environment, partner_id=referral.partner_id),
            )
        )
    ).first()
    if physio is None or not physio.active:
        raise ApiError(
            422,
            "validation_error",
            "Choose an active physiotherapist of this referral's registry.",
            fields={"physio_id": "Not an active physiotherapist for this referral."},
        )
    previous = referral.assigned_physio_id
    if previous == physio.id:
        raise ApiError(409, "conflict", f"The referral is already with {physio.name}.")
    matched_at = await assign(conn, ring=ring, referral=referral, physio=physio, now=now)
    await record_assignment(
        conn,
        ring=ring,
        referral_id=referral_id,
        physio_id=physio.id,
        previous_physio_id=previous,
        kind="manual",
        basis={},
        reason=reason.strip()[:REASON_MAX],
        actor=actor,
        now=matched_at,
    )
    await resolve_tasks(
        conn, referral_id=referral_id, purpose="unmatched", outcome="matched", now=now
    )
    action = "referral.reassigned" if previous else "referral.assigned"
    await record(conn, entry(actor, action, referral_id=referral_id, subject=physio.id))
