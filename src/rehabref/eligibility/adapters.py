"""Where coverage facts come from: an ``HmoAdapter`` per environment.

``RegistryAdapter`` (live keys) reads the member registry imported from each HMO's CSV;
a real insurer API can replace it by implementing the same Protocol. ``SandboxAdapter``
(test keys) never reads the registry: every policy number of a known HMO is a synthetic
member whose coverage is derived from a hash of the HMO code and policy number, so the same
request always gets the same answer (test keys never see live data).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from datetime import date
from typing import Protocol

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.clock import utcnow
from rehabref.db import table
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
        self, conn: AsyncConnection, *, hmo_code: str, policy_number: str
    ) -> MemberCoverage | None:
        """The member's coverage, or None when the HMO does not know the policy."""
        ...

    async def record_session(
        self, conn: AsyncConnection, *, hmo_code: str, policy_number: str
    ) -> None:
        """One completed session was charged to the member's annual allowance."""
        ...


class RegistryAdapter:
    """Live coverage from the ``hmo_members`` registry (CSV imports)."""

    async def find_member(
        self, conn: AsyncConnection, *, hmo_code: str, policy_number: str
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
            name=row.name,
            phone=row.phone,
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


_TIERS = ("Bronze", "Silver", "Gold", "Platinum")
_LIMITS = (6, 8, 10, 12)
_CO_PAYS = (0, 200_000, 350_000, 500_000)
_NAMES = ("Adaeze Nwosu", "Tunde Bakare", "Ngozi Eze", "Yusuf Musa", "Funmi Adeyemi")


class SandboxAdapter:
    """Deterministic synthetic coverage for test keys; the consumed sessions are counted."""

    async def find_member(
        self, conn: AsyncConnection, *, hmo_code: str, policy_number: str
    ) -> MemberCoverage | None:
        member = synthetic_member(hmo_code, policy_number, today=utcnow().date())
        used = (
            await conn.execute(
                select(func.count())
                .select_from(_uses)
                .where(
                    _uses.c.environment == "test",
                    _uses.c.hmo_code == hmo_code,
                    _uses.c.policy_number == policy_number,
                )
            )
        ).scalar_one()
        return replace(member, sessions_used=member.sessions_used + int(used))

    async def record_session(
        self, conn: AsyncConnection, *, hmo_code: str, policy_number: str
    ) -> None:
        return None  # the coverage_uses row written by the caller is the sandbox's counter


def synthetic_member(hmo_code: str, policy_number: str, *, today: date) -> MemberCoverage:
    digest = hashlib.sha256(f"{hmo_code}\x00{policy_number}".encode()).digest()
    return MemberCoverage(
        name=_NAMES[digest[0] % len(_NAMES)],
        phone=None,
        plan_tier=_TIERS[digest[1] % len(_TIERS)],
        policy_status="active",
        expiry_date=date(today.year + 1, 12, 31),
        physiotherapy_covered=True,
        post_surgical_covered=True,
        pre_auth_required=digest[2] % 2 == 0,
        annual_session_limit=_LIMITS[digest[3] % len(_LIMITS)],
        sessions_used=digest[4] % 3,
        co_pay_kobo=_CO_PAYS[digest[5] % len(_CO_PAYS)],
    )


def adapter_for(environment: str) -> HmoAdapter:
    return SandboxAdapter() if environment == "test" else RegistryAdapter()
