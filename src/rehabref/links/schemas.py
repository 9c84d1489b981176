"""Request and response bodies of the referral-link management API."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from rehabref import fields
from rehabref.clock import utcnow


def _future_utc(value: str) -> str:
    if fields.utc_timestamp_any(value) <= utcnow():
        raise ValueError("expires_at must be in the future.")
    return value


class ReferralLinkCreate(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        str_strip_whitespace=True,
        json_schema_extra={
            "examples": [{"campaign": "back-care-week", "expires_at": "2027-01-31T23:59:59Z"}]
        },
    )

    campaign: Annotated[
        str,
        StringConstraints(strip_whitespace=True, min_length=1, max_length=100),
        AfterValidator(fields.plain_text),
    ] = Field(description="Your name for the campaign; stored on every referral from the link.")
    expires_at: (
        Annotated[str, StringConstraints(max_length=40), AfterValidator(_future_utc)] | None
    ) = Field(default=None, description="ISO 8601 UTC; after it the link shows a 410 page.")


class ReferralLinkRecord(BaseModel):
    link_id: str = Field(examples=["lnk_01jd3k7v5n8q2w4e6r8t0y2u4i"])
    public_code: str = Field(description="At least 128 random bits; holds no patient data.")
    url: str = Field(description="The hosted form: {public_base}/r/{public_code}.")
    campaign: str
    active: bool = Field(
        description="True while the link accepts submissions (not deactivated, not expired)."
    )
    expires_at: str | None
    created_at: str
    deactivated_at: str | None
    clicks: int = Field(description="Views of the form while active (a bare counter).")
    referrals: int = Field(description="Referrals submitted through the link.")


class ReferralLinkList(BaseModel):
    data: list[ReferralLinkRecord]
    has_more: bool
    next_cursor: str | None
