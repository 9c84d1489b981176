"""Commission statements: the ops API's generate body and the documented answers."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class StatementGenerateIn(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        str_strip_whitespace=True,
        json_schema_extra={"examples": [{"partner_id": "prt_01jd3k8e5v", "period": "2026-10"}]},
    )

    partner_id: str = Field(min_length=1, max_length=40)
    period: str = Field(
        pattern=r"^\d{4}-(0[1-9]|1[0-2])$",
        description="The month, YYYY-MM (UTC); it must have ended.",
    )
    environment: Literal["live", "test"] = Field(
        "live", description="Referrals made with the partner's live (default) or test keys."
    )


class StatementRecord(BaseModel):
    """A statement's header: the month's totals in integer minor units."""

    id: str = Field(examples=["cst_01jd3k8e5v0m2c7h4q9w1x6y3z"])
    period: str = Field(examples=["2026-10"])
    environment: Literal["live", "test"]
    currency: str = Field(examples=["NGN"])
    status: Literal["pending_settlement", "settled"]
    line_count: int
    amount_total_minor: int = Field(description="Sum of the lines' paid amounts.")
    commission_total_minor: int = Field(description="Sum of the lines' commission.")
    created_at: str = Field(examples=["2026-11-01T08:00:00.000Z"])
    settled_at: str | None


class StatementLine(BaseModel):
    """One referral paid in the month; no patient data."""

    referral_id: str
    paid_at: str = Field(description="When the referral moved to `paid`.")
    currency: str
    amount_minor: int
    commission_minor: int = Field(description="Fixed when the referral was paid.")
    commission_status: str = Field(
        description="`pending_settlement`, `settled`, or `reversed` after a whole refund."
    )


class StatementDetail(StatementRecord):
    lines: list[StatementLine]


class StatementList(BaseModel):
    data: list[StatementRecord]
    has_more: bool
    next_cursor: str | None
