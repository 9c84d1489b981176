"""Monthly partner commission statements as pure policy: the period, the lines, the totals.

Rounding rule: there is none at statement level. Each line carries the commission fixed when
its referral was paid (referrals/commission.py: the basis-point part floored to the kobo, the
fixed part capped at the amount), and a statement's totals are the integer sums of its lines,
so the total always equals the sum of the lines and no kobo is gained or lost by grouping.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

STATEMENT_CURRENCY = "NGN"
PERIOD_PATTERN = re.compile(r"^(\d{4})-(0[1-9]|1[0-2])$")


class PeriodError(ValueError):
    """The period is not a ``YYYY-MM`` month."""


def period_bounds(period: str) -> tuple[datetime, datetime]:
    """[first instant of the month, first instant of the next) in UTC for ``YYYY-MM``."""
    match = PERIOD_PATTERN.match(period)
    if match is None or int(match.group(1)) < 2000:
        raise PeriodError("period must be a month as YYYY-MM (2000 or later)")
    year, month = int(match.group(1)), int(match.group(2))
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    return start, end


def period_is_over(period: str, now: datetime) -> bool:
    """A statement is made for a month that has ended, so no later payment could belong."""
    return period_bounds(period)[1] <= now


@dataclass(frozen=True)
class PaidReferral:
    """A referral paid in the period with its commission pending settlement."""

    referral_id: str
    paid_at: datetime
    currency: str
    amount_minor: int
    commission_minor: int


@dataclass(frozen=True)
class StatementDraft:
    currency: str
    lines: tuple[PaidReferral, ...]
    amount_total_minor: int
    commission_total_minor: int


def build_statement(
    paid: Iterable[PaidReferral], *, currency: str = STATEMENT_CURRENCY
) -> StatementDraft:
    """The statement's lines (oldest payment first, ties by referral id) and integer totals.

    Only lines in ``currency`` with a commission above zero belong on it.
    """
    lines = tuple(
        sorted(
            (line for line in paid if line.currency == currency and line.commission_minor > 0),
            key=lambda line: (line.paid_at, line.referral_id),
        )
    )
    return StatementDraft(
        currency=currency,
        lines=lines,
        amount_total_minor=sum(line.amount_minor for line in lines),
        commission_total_minor=sum(line.commission_minor for line in lines),
    )
