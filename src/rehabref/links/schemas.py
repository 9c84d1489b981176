"""The request body of the referral-link management API (its answers: ``responses.py``)."""

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
