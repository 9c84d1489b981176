"""Commission statements: the ops API's generate body (the answers: ``statement_responses.py``)."""

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
