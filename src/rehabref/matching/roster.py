"""Where a referral's candidate physiotherapists come from: a ``Roster`` per environment.

Threat: a test referral matched to a real physiotherapist, or a live referral to a sandbox
one, would mix sandbox and live data. ``RegistryRoster`` (live keys) reads only the live
registry rows; test keys get the sandbox's roster of their partner (``sandbox/roster.py``),
chosen at start-up (``wiring.roster_sources``). ``in_scope`` is the same rule as a SQL
condition, for every other place that lists or picks physiotherapists for a referral.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from sqlalchemy import ColumnElement, and_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.db import table
from rehabref.matching.rows import PhysioRow
from rehabref.places import city_key
from rehabref.referrals.rows import ReferralRow
from rehabref.tables.matching import Physiotherapist

_physios = table(Physiotherapist)
LIVE_REGISTRY = _physios.c.environment == "live"


def in_scope(*, environment: str, partner_id: str) -> ColumnElement[bool]:
    """Physiotherapists a referral of this partner and environment may be given: the live
    registry for live referrals, the partner's own sandbox roster for test referrals."""
    if environment == "live":
        return LIVE_REGISTRY
    return and_(_physios.c.environment == environment, _physios.c.partner_id == partner_id)


class Roster(Protocol):
    async def physiotherapists(
        self, conn: AsyncConnection, *, referral: ReferralRow
    ) -> Sequence[PhysioRow]:
        """The active physiotherapists of the referral's city (physiotherapists rows)."""
        ...


class RegistryRoster:
    """The live registry (ops API, console, CSV import)."""

    async def physiotherapists(
        self, conn: AsyncConnection, *, referral: ReferralRow
    ) -> Sequence[PhysioRow]:
        query = select(_physios).where(
            LIVE_REGISTRY,
            _physios.c.city_key == city_key(referral.patient_city),
            _physios.c.active.is_(True),
        )
        return (await conn.execute(query)).all()


class SlotAvailability(Protocol):
    async def fully_booked(
        self, conn: AsyncConnection, *, physio_ids: Sequence[str], now: datetime
    ) -> set[str]:
        """Those of ``physio_ids`` whose published schedule has no free slot soon."""
        ...


@dataclass(frozen=True)
class RosterSources:
    """Each environment's roster, chosen at start-up (``wiring``), and the availability
    filter matching applies to its candidates (None: availability is not considered)."""

    live: Roster
    test: Roster
    availability: SlotAvailability | None = None

    def for_environment(self, environment: str) -> Roster:
        return self.test if environment == "test" else self.live
