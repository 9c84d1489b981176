"""The commission statement answers as msgspec Structs: the bodies the partner and ops APIs
encode and the schemas the OpenAPI document shows (``openapi/commission.py``).

Field order is the JSON key order; a None field is written as ``null``. Timestamps are the
interface's text (``clock.iso``).
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from rehabref.cursors import Page


class StatementRecord(msgspec.Struct, frozen=True):
    """A statement's header: the month's totals in integer minor units."""

    id: Annotated[str, msgspec.Meta(examples=["cst_01jd3k8e5v0m2c7h4q9w1x6y3z"])]
    period: Annotated[str, msgspec.Meta(examples=["2026-10"])]
    environment: Literal["live", "test"]
    currency: Annotated[str, msgspec.Meta(examples=["NGN"])]
    status: Literal["pending_settlement", "settled"]
    line_count: int
    amount_total_minor: Annotated[int, msgspec.Meta(description="Sum of the lines' paid amounts.")]
    commission_total_minor: Annotated[
        int, msgspec.Meta(description="Sum of the lines' commission.")
    ]
    created_at: Annotated[str, msgspec.Meta(examples=["2026-11-01T08:00:00.000Z"])]
    settled_at: str | None


class StatementLine(msgspec.Struct, frozen=True):
    """One referral paid in the month; no patient data."""

    referral_id: str
    paid_at: Annotated[str, msgspec.Meta(description="When the referral moved to `paid`.")]
    currency: str
    amount_minor: int
    commission_minor: Annotated[int, msgspec.Meta(description="Fixed when the referral was paid.")]
    commission_status: Annotated[
        str,
        msgspec.Meta(
            description="`pending_settlement`, `settled`, or `reversed` after a whole refund."
        ),
    ]


class StatementDetail(StatementRecord, frozen=True):
    lines: list[StatementLine]


class StatementList(Page[StatementRecord], frozen=True):
    pass
