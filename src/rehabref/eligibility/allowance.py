"""What an HMO-billed referral's member has left, for claims and for scheduling.

Threat: a session given that the HMO will not pay for. Before a session is scheduled, the
member's remaining allowance (annual limit minus sessions used, spec 2.5) must exceed the
sessions already scheduled or in progress for that member (across their referrals); else the
scheduling is refused with 409 ``allowance_exceeded``, before anything is written.
Keyword-only; callers own the transaction.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.db import table
from rehabref.eligibility.adapters import CoverageSources, MemberCoverage
from rehabref.eligibility.codes import NEGOTIATED_RATE_KOBO
from rehabref.errors import ApiError
from rehabref.referrals.transitions import lock_referral
from rehabref.tables.care import CareSession
from rehabref.tables.eligibility import HmoMember, ReferralCoverage
from rehabref.tables.referrals import Referral

_coverage = table(ReferralCoverage)
_members = table(HmoMember)
_referrals = table(Referral)
_sessions = table(CareSession)
_OPEN_SESSIONS = ("scheduled", "in_progress")


@dataclass(frozen=True)
class ClaimCoverage:
    """An hmo_direct_billing referral's member, as a claim line names them."""

    environment: str
    hmo_code: str
    policy_number: str
    procedure_code: str
    pre_auth_token: str | None
    rate_minor: int
    member: MemberCoverage | None

    @property
    def sessions_remaining(self) -> int:
        if self.member is None:
            return 0
        return max(self.member.annual_session_limit - self.member.sessions_used, 0)


async def claim_coverage(
    conn: AsyncConnection, *, referral_id: str, coverage: CoverageSources
) -> ClaimCoverage | None:
    """The member behind an hmo_direct_billing referral with a verified pre-auth; else None."""
    row = (
        await conn.execute(
            select(_coverage, _referrals.c.billing_mode)
            .join(_referrals, _referrals.c.id == _coverage.c.referral_id)
            .where(_coverage.c.referral_id == referral_id)
        )
    ).first()
    if row is None or row.billing_mode != "hmo_direct_billing":
        return None
    # The phone only matters to the sandbox's scenario phone, which never gets a pre-auth.
    member = await coverage.for_environment(row.environment).find_member(
        conn, hmo_code=row.hmo_code, policy_number=row.policy_number, member_phone=""
    )
    return ClaimCoverage(
        environment=row.environment,
        hmo_code=row.hmo_code,
        policy_number=row.policy_number,
        procedure_code=row.procedure_code,
        pre_auth_token=row.pre_auth_token,
        rate_minor=NEGOTIATED_RATE_KOBO.get(row.procedure_code, 0),
        member=member,
    )


async def open_sessions_of_member(conn: AsyncConnection, claim: ClaimCoverage) -> int:
    """Sessions scheduled or in progress for the member, over all their referrals."""
    members_referrals = select(_coverage.c.referral_id).where(
        _coverage.c.environment == claim.environment,
        _coverage.c.hmo_code == claim.hmo_code,
        _coverage.c.policy_number == claim.policy_number,
    )
    return int(
        (
            await conn.execute(
                select(func.count())
                .select_from(_sessions)
                .where(
                    _sessions.c.referral_id.in_(members_referrals),
                    _sessions.c.status.in_(_OPEN_SESSIONS),
                )
            )
        ).scalar_one()
    )


def allowance_refusal(remaining: int, open_sessions: int) -> ApiError | None:
    """409 when one more session would go beyond what the member has left (pure)."""
    if open_sessions < remaining:
        return None
    return ApiError(
        409,
        "allowance_exceeded",
        "This session would go beyond the member's remaining HMO allowance.",
        fields={
            "scheduled_at": (
                f"The member has {remaining} covered session(s) left and {open_sessions} "
                "already scheduled; bill this session another way or ask the HMO for more."
            )
        },
    )


async def check_allowance(
    conn: AsyncConnection, *, referral_id: str, coverage: CoverageSources
) -> None:
    """Raise 409 ``allowance_exceeded`` when the member has no session left to schedule.

    The referral's row is locked first, then the member's registry row (live members), so
    two schedulings for one member, through one referral or several, are counted one after
    the other."""
    await lock_referral(conn, referral_id)
    claim = await claim_coverage(conn, referral_id=referral_id, coverage=coverage)
    if claim is None:
        return
    await conn.execute(
        select(_members.c.id)
        .where(
            _members.c.hmo_code == claim.hmo_code,
            _members.c.policy_number == claim.policy_number,
        )
        .with_for_update()
    )
    refusal = allowance_refusal(
        claim.sessions_remaining, await open_sessions_of_member(conn, claim)
    )
    if refusal is not None:
        raise refusal
