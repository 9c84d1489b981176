"""Where coverage facts come from: an ``HmoAdapter`` per environment.

``RegistryAdapter`` (live keys) reads the member registry imported from each HMO's CSV;
a real insurer API can replace it by implementing the same Protocol. Test keys get the
sandbox's synthetic coverage (``sandbox/coverage.py``), wired in at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Protocol

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.clock import utcnow
from rehabref.crypto import KeyRing
from rehabref.db import table
from rehabref.eligibility.member_sealing import opened_name, opened_phone
from rehabref.tables.eligibility import CoverageUse, HmoMember

_members = table(HmoMember)
_uses = table(CoverageUse)


@dataclass(frozen=True)
class MemberCoverage:
    name: str
    phone: str | None  # None: any phone is accepted (sandbox)
    plan_tier: str
    policy_status: str
    expiry_date: date
    physiotherapy_covered: bool
    post_surgical_covered: bool
    pre_auth_required: bool
    annual_session_limit: int
    sessions_used: int
    co_pay_kobo: int


class HmoAdapter(Protocol):
    async def find_member(
        self, conn: AsyncConnection, *, hmo_code: str, policy_number: str, member_phone: str
    ) -> MemberCoverage | None:
        """The member's coverage, or None when the HMO does not know the policy."""
        ...

    async def record_session(
        self, conn: AsyncConnection, *, hmo_code: str, policy_number: str
    ) -> None:
        """One completed session was charged to the member's annual allowance."""
        ...


class RegistryAdapter:
    """Live coverage from the ``hmo_members`` registry (CSV imports); the member's sealed
    name and phone are opened with ``ring``."""

    def __init__(self, ring: KeyRing) -> None:
        self._ring = ring

    async def find_member(
        self, conn: AsyncConnection, *, hmo_code: str, policy_number: str, member_phone: str
    ) -> MemberCoverage | None:
        row = (
            await conn.execute(
                select(_members).where(
                    _members.c.hmo_code == hmo_code, _members.c.policy_number == policy_number
                )
            )
        ).first()
        if row is None:
            return None
        return MemberCoverage(
            name=opened_name(self._ring, row.name),
            phone=opened_phone(self._ring, row.phone),
            plan_tier=row.plan_tier,
            policy_status=row.policy_status,
            expiry_date=row.expiry_date,
            physiotherapy_covered=bool(row.physiotherapy_covered),
            post_surgical_covered=bool(row.post_surgical_covered),
            pre_auth_required=bool(row.pre_auth_required),
            annual_session_limit=int(row.annual_session_limit),
            sessions_used=int(row.sessions_used),
            co_pay_kobo=int(row.co_pay_kobo),
        )

    async def record_session(
        self, conn: AsyncConnection, *, hmo_code: str, policy_number: str
    ) -> None:
        await conn.execute(
            update(_members)
            .where(_members.c.hmo_code == hmo_code, _members.c.policy_number == policy_number)
            .values(sessions_used=_members.c.sessions_used + 1, updated_at=utcnow())
        )


@dataclass(frozen=True)
class CoverageSources:
    """Where each environment's coverage facts come from, chosen at start-up (``wiring``)."""

    live: HmoAdapter
    test: HmoAdapter

    def for_environment(self, environment: str) -> HmoAdapter:
        return self.test if environment == "test" else self.live
