"""The eligibility answers as msgspec Structs (spec 2.5): the bodies the API encodes and the
schemas the OpenAPI document shows (``openapi/eligibility.py``).

An eligible and an ineligible answer are told apart by ``status``; the sandbox answers an
ineligible member with HTTP 400, whose body may otherwise be a malformed request's error.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import msgspec

from rehabref.eligibility.schemas import IneligibleReason
from rehabref.responses import AnswerUnion


class EligibilityAnswer(AnswerUnion):
    """HTTP 200: eligible, or (live keys) ineligible; tell them apart by ``status``."""

    __slots__ = ()


class SandboxIneligibleOrError(AnswerUnion):
    """HTTP 400: the sandbox's ineligible answer, or a malformed request's error body."""

    __slots__ = ()
    described_elsewhere: ClassVar[tuple[str, ...]] = ("ErrorBody",)


class MemberSummary(msgspec.Struct, frozen=True):
    name: str
    plan_tier: str
    policy_status: Annotated[str, msgspec.Meta(examples=["active"])]
    expiry_date: Annotated[str, msgspec.Meta(description="YYYY-MM-DD", examples=["2027-03-31"])]


class Coverage(msgspec.Struct, frozen=True):
    physiotherapy_covered: bool
    annual_session_limit: int
    sessions_remaining: int
    co_pay_amount_kobo: int
    pre_auth_required: bool


class EligibleResponse(msgspec.Struct, EligibilityAnswer, frozen=True):
    status: Literal["eligible"]
    member: MemberSummary
    coverage: Coverage
    pre_auth_token: Annotated[
        str,
        msgspec.Meta(
            description="Signed, expires after 30 days, bound to this partner, environment, "
            "member and procedure. Send it as pre_auth_token on an hmo_direct_billing referral "
            "(required by the HMO when coverage.pre_auth_required is true); completed sessions "
            "of that referral then consume the member's allowance."
        ),
    ]


class FallbackOption(msgspec.Struct, frozen=True):
    can_self_pay: bool
    negotiated_rate_kobo: int


class IneligibleResponse(msgspec.Struct, EligibilityAnswer, SandboxIneligibleOrError, frozen=True):
    status: Literal["ineligible"]
    reason: IneligibleReason
    message: str
    fallback_option: FallbackOption


# What each union names, in the order the document lists them.
EligibilityAnswer.alternatives = (EligibleResponse, IneligibleResponse)
SandboxIneligibleOrError.alternatives = (IneligibleResponse,)
