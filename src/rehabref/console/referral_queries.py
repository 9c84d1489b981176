"""Read queries behind the referral page's workbench parts: the patient's intake answers,
the assigned physiotherapist, the physiotherapists it may be given to (filtered), and the
coordinators' actions on it. Never commits.

Threat: offering a physiotherapist outside the referral's roster (a real one for a test
referral): every candidate list is cut by ``matching.roster.in_scope``.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Row, func, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.db import table
from rehabref.matching.roster import in_scope
from rehabref.matching.rows import PhysioRow
from rehabref.places import city_key
from rehabref.referrals.rows import ReferralRow
from rehabref.tables.audit import AuditEvent
from rehabref.tables.intake import AssistantSession
from rehabref.tables.matching import Physiotherapist

_assistant = table(AssistantSession)
_physios = table(Physiotherapist)
_audit = table(AuditEvent)
CANDIDATE_LIMIT = 50


async def intake_answers(conn: AsyncConnection, referral_id: str) -> Row[Any] | None:
    """The patient's latest completed assistant answers (availability, care mode, area)."""
    query: Any = (
        select(
            _assistant.c.availability,
            _assistant.c.care_mode,
            _assistant.c.area,
            _assistant.c.completed_at,
        )
        .where(_assistant.c.referral_id == referral_id, _assistant.c.completed_at.is_not(None))
        .order_by(_assistant.c.completed_at.desc())
        .limit(1)
    )
    return (await conn.execute(query)).first()


async def physio(conn: AsyncConnection, physio_id: str | None) -> PhysioRow | None:
    if physio_id is None:
        return None
    return (await conn.execute(select(_physios).where(_physios.c.id == physio_id))).first()


async def physio_names(conn: AsyncConnection, ids: set[str]) -> dict[str, str]:
    if not ids:
        return {}
    rows = await conn.execute(select(_physios.c.id, _physios.c.name).where(_physios.c.id.in_(ids)))
    return {row.id: row.name for row in rows}


async def candidates(
    conn: AsyncConnection,
    referral: ReferralRow,
    *,
    city: str | None,
    specialization: str | None,
) -> list[PhysioRow]:
    """Active physiotherapists the referral may be given to, in ``city`` (any city when
    empty) and offering ``specialization`` (any when empty), best rated first."""
    query: Any = select(_physios).where(
        in_scope(environment=referral.environment, partner_id=referral.partner_id),
        _physios.c.active.is_(True),
    )
    if city:
        query = query.where(_physios.c.city_key == city_key(city))
    rows: list[PhysioRow] = list(
        (await conn.execute(query.order_by(_physios.c.rating.desc(), _physios.c.name))).all()
    )
    if specialization:  # a JSON list: filtered here, the roster of one city is small
        rows = [row for row in rows if specialization in row.specializations]
    return rows[:CANDIDATE_LIMIT]


async def coordinator_actions(conn: AsyncConnection, referral_id: str) -> list[Row[Any]]:
    """What operators changed on the referral (the audit trail's change records; views and
    listings are left to the admins' audit page)."""
    query: Any = (
        select(_audit.c.at, _audit.c.actor_id, _audit.c.action, _audit.c.subject)
        .where(
            _audit.c.referral_id == referral_id,
            _audit.c.actor_kind == "operator",
            _audit.c.action.not_like("%.read"),
            _audit.c.action.not_like("%.listed"),
            _audit.c.action.not_like("%.viewed"),
        )
        .order_by(_audit.c.at, _audit.c.id)
        .limit(200)
    )
    return list((await conn.execute(query)).all())


async def physios_page(
    conn: AsyncConnection,
    *,
    search: str | None,
    city: str | None,
    specialization: str | None,
    modality: str | None,
    active: bool | None,
    limit: int = 200,
) -> list[PhysioRow]:
    """The live registry for the physiotherapists table: ``search`` matches any word of a
    name, or a license number, by prefix (case-insensitive)."""
    query: Any = select(_physios).where(_physios.c.environment == "live")
    if city:
        query = query.where(_physios.c.city_key == city_key(city))
    if active is not None:
        query = query.where(_physios.c.active.is_(active))
    if search:
        prefix = search.lower().replace("\\", "").replace("%", "").replace("_", "") + "%"
        query = query.where(
            or_(
                func.lower(_physios.c.name).like(prefix),
                func.lower(_physios.c.name).like("% " + prefix),
                func.lower(_physios.c.license_number).like(prefix),
            )
        )
    rows: list[PhysioRow] = list(
        (await conn.execute(query.order_by(_physios.c.name).limit(limit * 2))).all()
    )
    if specialization:
        rows = [row for row in rows if specialization in row.specializations]
    if modality:
        rows = [row for row in rows if modality in row.modalities]
    return rows[:limit]
