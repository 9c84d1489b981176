"""Matching a referral to one physiotherapist (rules in ``rules.py``, docs/matching.md).

``match_referral`` runs inside the caller's transaction (intake completion or the ops
``match`` endpoint): it assigns the best physiotherapist of the referral's roster (the live
registry, or the partner's sandbox roster for test referrals: ``roster.py``) and writes
``provider.matched`` in the same transaction, or opens an ``unmatched`` contact task for a
coordinator.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.clock import as_utc, iso, utcnow
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.errors import ApiError
from rehabref.events.outbox import NewEvent, record_events
from rehabref.matching.assignments import basis_of, record_assignment
from rehabref.matching.roster import Roster, RosterSources
from rehabref.matching.rows import PhysioRow
from rehabref.matching.rules import Candidate, acceptable_modalities, rank, wanted_specialization
from rehabref.places import area_from_city_field, area_key
from rehabref.referrals.event_data import callback_targets, contract_of, referral_base
from rehabref.referrals.rows import ReferralRow
from rehabref.referrals.sealing import clinical_text
from rehabref.referrals.tasks import open_unmatched_task
from rehabref.referrals.transitions import lock_referral
from rehabref.tables.intake import AssistantSession
from rehabref.tables.matching import Physiotherapist
from rehabref.tables.referrals import Referral

_physios = table(Physiotherapist)
_referrals = table(Referral)
_assistant = table(AssistantSession)

# Referrals in these states no longer hold a physiotherapist's weekly slot.
_RELEASED = ("closed", "cancelled")
_MATCHABLE_BLOCKED = frozenset(_RELEASED)


def week_start(now: datetime) -> datetime:
    """Monday 00:00 UTC of the week containing ``now``."""
    day = as_utc(now).replace(hour=0, minute=0, second=0, microsecond=0)
    return day - timedelta(days=day.weekday())


async def _care_mode(conn: AsyncConnection, referral: ReferralRow) -> str | None:
    """The patient's intake answer when there is one, else the referral's care_mode."""
    answered = (
        await conn.execute(
            select(_assistant.c.care_mode)
            .where(
                _assistant.c.referral_id == referral.id,
                _assistant.c.completed_at.is_not(None),
                _assistant.c.care_mode.is_not(None),
            )
            .order_by(_assistant.c.completed_at.desc())
            .limit(1)
        )
    ).scalar_one_or_none()
    mode: str | None = answered or referral.care_mode
    return mode


async def _weekly_load(
    conn: AsyncConnection, *, physio_ids: list[str], environment: str, since: datetime
) -> dict[str, int]:
    if not physio_ids:
        return {}
    rows = await conn.execute(
        select(_referrals.c.assigned_physio_id, func.count())
        .where(
            _referrals.c.assigned_physio_id.in_(physio_ids),
            _referrals.c.environment == environment,
            _referrals.c.matched_at >= since,
            _referrals.c.status.not_in(_RELEASED),
        )
        .group_by(_referrals.c.assigned_physio_id)
    )
    return {physio_id: int(n) for physio_id, n in rows.all()}


async def candidates(
    conn: AsyncConnection,
    *,
    roster: Roster,
    referral: ReferralRow,
    care_mode: str | None,
    now: datetime,
) -> list[Candidate]:
    """Active physiotherapists of the roster in the referral's city offering an acceptable
    modality."""
    modalities = acceptable_modalities(care_mode)
    rows = await roster.physiotherapists(conn, referral=referral)
    fitting = [row for row in rows if modalities.intersection(row.modalities)]
    load = await _weekly_load(
        conn,
        physio_ids=[row.id for row in fitting],
        environment=referral.environment,
        since=week_start(now),
    )
    return [
        Candidate(
            physio_id=row.id,
            license_number=row.license_number,
            rating=float(row.rating),
            specializations=list(row.specializations),
            areas=list(row.areas),
            weekly_capacity=row.weekly_capacity,
            assigned_this_week=load.get(row.id, 0),
        )
        for row in fitting
    ]


def _patient_area(referral: ReferralRow) -> str | None:
    if referral.patient_area:
        return area_key(referral.patient_area)
    return area_from_city_field(referral.patient_city)


async def match_referral(
    conn: AsyncConnection,
    *,
    roster: RosterSources,
    ring: KeyRing,
    referral_id: str,
    now: datetime,
    actor: str = "system:matching",
) -> str | None:
    """Assign the best physiotherapist and emit ``provider.matched``; None when none fits.

    A referral that already has a physiotherapist keeps it (the call is idempotent).
    """
    referral = await lock_referral(conn, referral_id)
    if referral is None:
        raise ApiError(404, "not_found", "No referral with this identifier.")
    if referral.assigned_physio_id is not None:
        return str(referral.assigned_physio_id)
    if referral.status in _MATCHABLE_BLOCKED:
        raise ApiError(409, "invalid_transition", f"The referral is {referral.status}.")
    care_mode = await _care_mode(conn, referral)
    clinical = clinical_text(ring, referral)
    wanted = wanted_specialization(clinical.diagnosis or clinical.reason)
    area = _patient_area(referral)
    pool = await candidates(
        conn,
        roster=roster.for_environment(referral.environment),
        referral=referral,
        care_mode=care_mode,
        now=now,
    )
    if roster.availability is not None:  # a full schedule or leave: not this physiotherapist
        full = await roster.availability.fully_booked(
            conn, physio_ids=[c.physio_id for c in pool], now=now
        )
        pool = [candidate for candidate in pool if candidate.physio_id not in full]
    for candidate in rank(pool, wanted=wanted, area=area):
        physio = await _claim_slot(conn, candidate, environment=referral.environment, now=now)
        if physio is not None:
            matched_at = await assign(conn, ring=ring, referral=referral, physio=physio, now=now)
            await record_assignment(
                conn,
                ring=ring,
                referral_id=referral.id,
                physio_id=physio.id,
                previous_physio_id=None,
                kind="automatic",
                basis=basis_of(candidate, wanted=wanted, area=area),
                reason=None,
                actor=actor,
                now=matched_at,
            )
            return candidate.physio_id
    await open_unmatched_task(conn, referral=referral, now=now)
    return None


async def _claim_slot(
    conn: AsyncConnection, candidate: Candidate, *, environment: str, now: datetime
) -> PhysioRow | None:
    """Lock the physiotherapist row and re-count: concurrent matches cannot overbook."""
    physio = (
        await conn.execute(
            select(_physios).where(_physios.c.id == candidate.physio_id).with_for_update()
        )
    ).first()
    if physio is None or not physio.active:
        return None
    load = await _weekly_load(
        conn, physio_ids=[physio.id], environment=environment, since=week_start(now)
    )
    return physio if load.get(physio.id, 0) < physio.weekly_capacity else None


async def assign(
    conn: AsyncConnection,
    *,
    ring: KeyRing,
    referral: ReferralRow,
    physio: PhysioRow,
    now: datetime,
) -> datetime:
    """Give the (locked) referral to ``physio`` and tell the partner (``provider.matched``);
    the time of the match."""
    # The match follows the event that triggered it (intake completion at ``now``): at least
    # 1 ms later, so partners ordering events by occurred_at see intake before match.
    matched_at = max(utcnow(), as_utc(now) + timedelta(milliseconds=1))
    await conn.execute(
        update(_referrals)
        .where(_referrals.c.id == referral.id)
        .values(assigned_physio_id=physio.id, matched_at=matched_at, updated_at=matched_at)
    )
    contract = await contract_of(conn, referral.partner_id)
    data = referral_base(referral)
    data["matched_at"] = iso(matched_at)
    data["physiotherapist"] = physio_summary(physio, include_phone=contract == "g")
    await record_events(
        conn,
        ring,
        partner_id=referral.partner_id,
        environment=referral.environment,
        events=[
            NewEvent(
                "provider.matched",
                data,
                referral.id,
                extra_targets=callback_targets(referral),
                occurred_at=matched_at,
            )
        ],
    )
    return matched_at


def physio_summary(physio: PhysioRow, *, include_phone: bool) -> dict[str, Any]:
    """What partners learn about the assigned physiotherapist (phone for clinical partners)."""
    summary: dict[str, Any] = {
        "name": physio.name,
        "license_number": physio.license_number,
        "specialization": physio.specializations[0],
        "rating": physio.rating,
    }
    if include_phone:
        summary["phone"] = physio.phone
    return summary
