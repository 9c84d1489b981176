"""The sandbox's coverage source: deterministic synthetic HMO members for test keys.

Every policy number of a known HMO is a synthetic member whose coverage is derived from a
hash of the HMO code and policy number, so the same request always gets the same answer;
test keys never see the live registry. Test phone 4 is a member whose annual allowance is
used up (spec 6.5: the ineligible policy scenario).
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from datetime import date

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.clock import utcnow
from rehabref.db import table
from rehabref.eligibility.adapters import MemberCoverage
from rehabref.sandbox.phones import TEST_PHONES
from rehabref.tables.eligibility import CoverageUse

_uses = table(CoverageUse)
INELIGIBLE_PHONE = TEST_PHONES[3]  # scenario 4

_TIERS = ("Bronze", "Silver", "Gold", "Platinum")
_LIMITS = (6, 8, 10, 12)
_CO_PAYS = (0, 200_000, 350_000, 500_000)
_NAMES = ("Adaeze Nwosu", "Tunde Bakare", "Ngozi Eze", "Yusuf Musa", "Funmi Adeyemi")


class SandboxCoverage:
    """Deterministic synthetic coverage for test keys; the consumed sessions are counted."""

    async def find_member(
        self, conn: AsyncConnection, *, hmo_code: str, policy_number: str, member_phone: str
    ) -> MemberCoverage | None:
        member = synthetic_member(hmo_code, policy_number, today=utcnow().date())
        if member_phone == INELIGIBLE_PHONE:
            return replace(member, sessions_used=member.annual_session_limit)
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
