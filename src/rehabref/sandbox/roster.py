"""The sandbox's physiotherapist roster: synthetic physiotherapists of one partner's sandbox.

Threat: a test referral matched to a real physiotherapist would hand a real clinician's
name and phone to test traffic (and book their capacity); a sandbox that needs us to fill
the registry first does not work for a new partner. So test keys never read the live
registry: the first time a partner's test referral names a city, ``ROSTER`` is created for
that partner and city (``environment = 'test'``, the partner's id; the live registry, the
ops API, the console's registry pages and CSV imports never see these rows) and matching
chooses among them with the same rules as for live referrals.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.clock import utcnow
from rehabref.db import table
from rehabref.ids import new_id
from rehabref.matching.rows import PhysioRow
from rehabref.matching.rules import MODALITIES
from rehabref.places import AREA_CENTROIDS, area_from_city_field, area_key, city_key
from rehabref.referrals.rows import ReferralRow
from rehabref.tables.matching import Physiotherapist

_physios = table(Physiotherapist)

# (name, specializations, rating): together they cover every specialization.
ROSTER: tuple[tuple[str, tuple[str, ...], float], ...] = (
    ("Adaeze Okafor (sandbox)", ("musculoskeletal", "orthopaedic", "sports"), 4.9),
    ("Emeka Nwankwo (sandbox)", ("neurological", "geriatric", "general"), 4.8),
    ("Halima Bello (sandbox)", ("paediatric", "cardiopulmonary", "womens_health"), 4.7),
)
# Enough that a partner's test traffic never fills the roster's week.
WEEKLY_CAPACITY = 10_000


class SandboxRoster:
    """A partner's sandbox roster for the referral's city, created on first use."""

    async def physiotherapists(
        self, conn: AsyncConnection, *, referral: ReferralRow
    ) -> Sequence[PhysioRow]:
        found = await _roster(conn, partner_id=referral.partner_id, city=referral.patient_city)
        if found:
            return found
        await _create(conn, referral=referral)
        return await _roster(conn, partner_id=referral.partner_id, city=referral.patient_city)


async def _roster(conn: AsyncConnection, *, partner_id: str, city: str) -> Sequence[PhysioRow]:
    query = select(_physios).where(
        _physios.c.environment == "test",
        _physios.c.city_key == city_key(city),
        _physios.c.partner_id == partner_id,
        _physios.c.active.is_(True),
    )
    return (await conn.execute(query)).all()


def license_number(partner_id: str, city: str, index: int) -> str:
    """Unique per partner and city, and plainly not a real licence."""
    digest = hashlib.sha256(f"{partner_id}\x00{city_key(city)}".encode()).hexdigest()[:12]
    return f"SANDBOX-{digest.upper()}-{index + 1}"


def roster_rows(referral: ReferralRow) -> list[dict[str, Any]]:
    city = str(referral.patient_city)
    key = city_key(city)
    areas = sorted(AREA_CENTROIDS.get(key, {}))
    own = area_key(referral.patient_area) if referral.patient_area else None
    own = own or area_from_city_field(city)
    if own and own not in areas:
        areas.append(own)
    now = utcnow()
    return [
        {
            "id": new_id("phy"),
            "environment": "test",
            "partner_id": referral.partner_id,
            "name": name,
            "license_number": license_number(referral.partner_id, city, index),
            "specializations": list(specializations),
            "rating": rating,
            "phone": f"+23480999910{index:02d}",
            "city": city,
            "city_key": key,
            "areas": areas,
            "modalities": list(MODALITIES),
            "weekly_capacity": WEEKLY_CAPACITY,
            "active": True,
            "created_at": now,
            "updated_at": now,
        }
        for index, (name, specializations, rating) in enumerate(ROSTER)
    ]


async def _create(conn: AsyncConnection, *, referral: ReferralRow) -> None:
    """Insert the roster; a concurrent first use that got there first wins, quietly."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    statement = dialect.insert(_physios).on_conflict_do_nothing(
        index_elements=["environment", "license_number"]
    )
    await conn.execute(statement, roster_rows(referral))
