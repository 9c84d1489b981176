"""Why a referral has its physiotherapist: the record of each match and (re)assignment.

Threat: a coordinator cannot tell why a patient went to a physiotherapist, or a manual
reassignment leaves no trace of who did it and why. Every assignment writes one
``physio_assignments`` row in the transaction that assigns: the matching rules' facts for an
automatic match (no clinical text: whether the specialization fits, not the diagnosis), the
coordinator's reason, sealed at rest, for a manual one. ``describe`` turns a row into the
sentence the console shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Row, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.crypto import KeyRing, seal
from rehabref.db import table
from rehabref.ids import new_id
from rehabref.matching.rules import (
    POINTS_SPECIALIZATION_EXACT,
    POINTS_SPECIALIZATION_GENERAL,
    POINTS_SPECIALIZATION_RELATED,
    Candidate,
    specialization_points,
)
from rehabref.referrals.sealing import open_text
from rehabref.tables.assignments import PhysioAssignment

REASON = "assignment.reason"
_assignments = table(PhysioAssignment)

_FIT = {
    POINTS_SPECIALIZATION_EXACT: "exact",
    POINTS_SPECIALIZATION_RELATED: "related",
    POINTS_SPECIALIZATION_GENERAL: "general",
}
_FIT_TEXT = {
    "exact": "specialization fits the referral",
    "related": "a closely related specialization",
    "general": "general practice (no specialist fit)",
    "none": "no specialization fit",
}


def basis_of(candidate: Candidate, *, wanted: str | None, area: str | None) -> dict[str, Any]:
    """The facts the rules ranked ``candidate`` on (``rules.score``'s inputs)."""
    points = specialization_points(wanted, candidate.specializations)
    return {
        "specialization": _FIT.get(points, "none"),
        "area": None if area is None else area in candidate.areas,
        "rating": candidate.rating,
        "free_places": max(candidate.remaining, 0),
        "weekly_capacity": candidate.weekly_capacity,
    }


@dataclass(frozen=True)
class Assignment:
    physio_id: str
    previous_physio_id: str | None
    kind: str
    actor: str
    at: datetime
    reason: str  # what the console shows


def describe(kind: str, basis: dict[str, Any], reason: str | None) -> str:
    if kind == "manual":
        return f"Assigned by a coordinator: {reason or 'no reason given'}"
    parts = [_FIT_TEXT.get(str(basis.get("specialization")), "no specialization fit")]
    area = basis.get("area")
    parts.append(
        "patient's area not known"
        if area is None
        else "covers the patient's area"
        if area
        else "same city, another area"
    )
    parts.append(f"rating {float(basis.get('rating', 0)):.1f}")
    parts.append(
        f"{basis.get('free_places', 0)} of {basis.get('weekly_capacity', 0)} weekly places free"
    )
    return "Automatic match: " + "; ".join(parts) + "."


async def record_assignment(
    conn: AsyncConnection,
    *,
    ring: KeyRing,
    referral_id: str,
    physio_id: str,
    previous_physio_id: str | None,
    kind: str,
    basis: dict[str, Any],
    reason: str | None,
    actor: str,
    now: datetime,
) -> None:
    await conn.execute(
        insert(_assignments).values(
            id=new_id("asg"),
            referral_id=referral_id,
            physio_id=physio_id,
            previous_physio_id=previous_physio_id,
            kind=kind,
            basis=basis,
            reason=None if reason is None else seal(ring, REASON, reason),
            actor=actor,
            created_at=now,
        )
    )


async def assignments_of(
    conn: AsyncConnection, *, ring: KeyRing, referral_id: str
) -> list[Assignment]:
    """The referral's assignments, oldest first, with their reasons opened."""
    rows: list[Row[Any]] = list(
        (
            await conn.execute(
                select(_assignments)
                .where(_assignments.c.referral_id == referral_id)
                .order_by(_assignments.c.created_at, _assignments.c.id)
            )
        ).all()
    )
    return [
        Assignment(
            physio_id=row.physio_id,
            previous_physio_id=row.previous_physio_id,
            kind=row.kind,
            actor=row.actor,
            at=row.created_at,
            reason=describe(row.kind, row.basis, open_text(ring, REASON, row.reason)),
        )
        for row in rows
    ]
