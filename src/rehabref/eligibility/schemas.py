"""Eligibility check request and its eligible / ineligible answers (spec 2.5)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, RootModel, StringConstraints

from rehabref import fields
from rehabref.errors_schema import ErrorBody

HmoCode = Literal["AXA_MANSARD", "HYGEIA_HMO", "RELIANCE_HMO", "LEADWAY_HEALTH", "AVON_HMO"]
ProcedureCode = Literal["PHYSIO_STD_SESSION", "PHYSIO_POST_SURGICAL"]
IneligibleReason = Literal[
    "member_not_found",
    "policy_inactive",
    "policy_expired",
    "not_covered",
    "annual_limit_exceeded",
]
PolicyNumber = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=64),
    AfterValidator(fields.plain_text),
]


class EligibilityRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        str_strip_whitespace=True,
        json_schema_extra={
            "examples": [
                {
                    "policy_number": "AXA-00012345",
                    "member_phone": "+2348031234567",
                    "hmo_code": "AXA_MANSARD",
                    "procedure_code": "PHYSIO_STD_SESSION",
                }
            ]
        },
    )

    policy_number: PolicyNumber = Field(description="Member ID or corporate staff ID.")
    member_phone: fields.Phone = Field(description="The member's verified phone (E.164).")
    hmo_code: HmoCode
    procedure_code: ProcedureCode = "PHYSIO_STD_SESSION"


class MemberSummary(BaseModel):
    name: str
    plan_tier: str
    policy_status: str = Field(examples=["active"])
    expiry_date: str = Field(description="YYYY-MM-DD", examples=["2027-03-31"])


class Coverage(BaseModel):
    physiotherapy_covered: bool
    annual_session_limit: int
    sessions_remaining: int
    co_pay_amount_kobo: int
    pre_auth_required: bool


class EligibleResponse(BaseModel):
    status: Literal["eligible"]
    member: MemberSummary
    coverage: Coverage
    pre_auth_token: str = Field(
        description="Signed, expires after 30 days, bound to this partner, environment, member "
        "and procedure. Send it as pre_auth_token on an hmo_direct_billing referral (required "
        "by the HMO when coverage.pre_auth_required is true); completed sessions of that "
        "referral then consume the member's allowance."
    )


class FallbackOption(BaseModel):
    can_self_pay: bool
    negotiated_rate_kobo: int


class IneligibleResponse(BaseModel):
    status: Literal["ineligible"]
    reason: IneligibleReason
    message: str
    fallback_option: FallbackOption


class EligibilityAnswer(RootModel[EligibleResponse | IneligibleResponse]):
    """HTTP 200: eligible, or (live keys) ineligible; tell them apart by ``status``."""


class SandboxIneligibleOrError(RootModel[IneligibleResponse | ErrorBody]):
    """HTTP 400: the sandbox's ineligible answer, or a malformed request's error body."""
