"""The eligibility check request (spec 2.5; its answers: ``responses.py``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from rehabref import fields

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
