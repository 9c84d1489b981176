"""Eligibility decisions and allowance consumption. Keyword-only; callers own the transaction.

Rules, checked in this order (the first failing one is the reason):
1. ``member_not_found``: the HMO does not know the policy number, or ``member_phone`` is not
   the member's verified phone (the two cases answer alike, so a phone cannot be used to
   probe which policy numbers exist).
2. ``policy_inactive``: policy status is not ``active``.
3. ``policy_expired``: the expiry date is before today (UTC).
4. ``not_covered``: physiotherapy is not covered, or the procedure is PHYSIO_POST_SURGICAL and
   the plan does not cover post-surgical rehabilitation.
5. ``annual_limit_exceeded``: no sessions remain this year.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date
from typing import cast

from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from rehabref.clock import utcnow
from rehabref.db import table
from rehabref.eligibility import tokens
from rehabref.eligibility.adapters import CoverageSources, HmoAdapter, MemberCoverage
from rehabref.eligibility.codes import NEGOTIATED_RATE_KOBO, POST_SURGICAL
from rehabref.eligibility.responses import (
    Coverage,
    EligibleResponse,
    FallbackOption,
    IneligibleResponse,
    MemberSummary,
)
from rehabref.eligibility.schemas import EligibilityRequest, IneligibleReason
from rehabref.ids import new_id
from rehabref.instance_secret import SecretBox
from rehabref.principal import Principal
from rehabref.tables.eligibility import CoverageUse, ReferralCoverage
from rehabref.tables.referrals import Referral

log = logging.getLogger("rehabref.eligibility")

_coverage = table(ReferralCoverage)
_uses = table(CoverageUse)
_referrals = table(Referral)

MESSAGES = {
    "member_not_found": "No member with this policy number and verified phone at this HMO.",
    "policy_inactive": "The member's policy is not active.",
    "policy_expired": "The member's policy has expired.",
    "not_covered": "The member's plan does not cover this physiotherapy procedure.",
    "annual_limit_exceeded": "The member has used all physiotherapy sessions covered this year.",
}


@dataclass(frozen=True)
class Decision:
    eligible: bool
    reason: str | None
    member: MemberCoverage | None

    @property
    def sessions_remaining(self) -> int:
        if self.member is None:
            return 0
        return max(self.member.annual_session_limit - self.member.sessions_used, 0)


def decide(
    member: MemberCoverage | None, *, member_phone: str, procedure_code: str, today: date
) -> Decision:
    if member is None or (member.phone is not None and member.phone != member_phone):
        return Decision(False, "member_not_found", None)
    if member.policy_status != "active":
        return Decision(False, "policy_inactive", member)
    if member.expiry_date < today:
        return Decision(False, "policy_expired", member)
    if not member.physiotherapy_covered or (
        procedure_code == POST_SURGICAL and not member.post_surgical_covered
    ):
        return Decision(False, "not_covered", member)
    if member.sessions_used >= member.annual_session_limit:
        return Decision(False, "annual_limit_exceeded", member)
    return Decision(True, None, member)


def ineligible_body(reason: str, procedure_code: str) -> IneligibleResponse:
    return IneligibleResponse(
        status="ineligible",
        reason=cast(IneligibleReason, reason),
        message=MESSAGES[reason],
        fallback_option=FallbackOption(
            can_self_pay=True, negotiated_rate_kobo=NEGOTIATED_RATE_KOBO[procedure_code]
        ),
    )


async def check(
    conn: AsyncConnection,
    *,
    principal: Principal,
    request: EligibilityRequest,
    box: SecretBox,
    adapter: HmoAdapter,
) -> tuple[int, EligibleResponse | IneligibleResponse]:
    """The HTTP status and body of an eligibility answer.

    Live keys: 200 for both answers (an ineligible member is a normal business result).
    Test keys: every ineligible answer is a 400, as the sandbox scenario of spec 6.5
    prescribes (their ``adapter`` makes test phone 4 a member with no sessions left).
    """
    found = await adapter.find_member(
        conn,
        hmo_code=request.hmo_code,
        policy_number=request.policy_number,
        member_phone=request.member_phone,
    )
    decision = decide(
        found,
        member_phone=request.member_phone,
        procedure_code=request.procedure_code,
        today=utcnow().date(),
    )
    log.info(
        "eligibility checked",
        extra={"hmo_code": request.hmo_code, "eligible": decision.eligible},
    )
    if not decision.eligible or decision.member is None:
        status = 400 if principal.is_sandbox else 200
        return status, ineligible_body(
            decision.reason or "member_not_found", request.procedure_code
        )
    member = decision.member
    grant = tokens.new_grant(
        partner_id=principal.partner_id,
        environment=principal.environment,
        hmo_code=request.hmo_code,
        policy_number=request.policy_number,
        procedure_code=request.procedure_code,
        member_phone=request.member_phone,
    )
    return 200, EligibleResponse(
        status="eligible",
        member=MemberSummary(
            name=member.name,
            plan_tier=member.plan_tier,
            policy_status=member.policy_status,
            expiry_date=member.expiry_date.isoformat(),
        ),
        coverage=Coverage(
            physiotherapy_covered=member.physiotherapy_covered,
            annual_session_limit=member.annual_session_limit,
            sessions_remaining=decision.sessions_remaining,
            co_pay_amount_kobo=member.co_pay_kobo,
            pre_auth_required=member.pre_auth_required,
        ),
        pre_auth_token=tokens.issue(box, grant),
    )


async def consume_session(
    conn: AsyncConnection,
    *,
    referral_id: str,
    coverage: CoverageSources,
    session_id: str | None = None,
) -> bool:
    """Charge one completed session to the member behind an hmo_direct_billing referral.

    Called by the session-completed workflow in the completing transaction. Does nothing (False)
    for other billing modes or referrals without a verified pre_auth_token; charging the
    same ``session_id`` twice is a no-op. Returns True when a session was charged.
    """
    row = (
        await conn.execute(
            select(
                _coverage.c.environment,
                _coverage.c.hmo_code,
                _coverage.c.policy_number,
                _referrals.c.billing_mode,
            )
            .join(_referrals, _referrals.c.id == _coverage.c.referral_id)
            .where(_coverage.c.referral_id == referral_id)
        )
    ).first()
    if row is None or row.billing_mode != "hmo_direct_billing":
        return False
    if session_id is not None:
        seen = (
            await conn.execute(select(_uses.c.id).where(_uses.c.session_id == session_id))
        ).first()
        if seen is not None:
            return False
    try:
        async with conn.begin_nested():
            await conn.execute(
                insert(_uses),
                {
                    "id": new_id("cvu"),
                    "environment": row.environment,
                    "hmo_code": row.hmo_code,
                    "policy_number": row.policy_number,
                    "referral_id": referral_id,
                    "session_id": session_id,
                    "consumed_at": utcnow(),
                },
            )
    except IntegrityError:
        return False  # the same session, charged concurrently
    await coverage.for_environment(row.environment).record_session(
        conn, hmo_code=row.hmo_code, policy_number=row.policy_number
    )
    return True
