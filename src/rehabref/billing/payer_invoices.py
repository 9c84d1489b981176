"""HMO and employer invoices as pure policy: numbers, line amounts, totals, states.

Threat: a payer billed twice, for the wrong amount, or an invoice changed after it was sent.
Numbers are derived from (payer, environment, month) so the ``invoice_reference`` a
``session.completed`` event carries names the invoice before it exists; totals are integer
sums of the lines; the states move only as ``ALLOWED`` says.

Rounding rule: none. Every line is a whole number of kobo (the procedure's negotiated rate and
the member's co-pay, both integer kobo); a line's co-pay is capped at its amount, so its
payable part is never negative; an invoice's totals are the integer sums of its lines, and
``payable_total_minor == amount_total_minor - co_pay_total_minor`` always.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from rehabref.clock import as_utc

HMO = "hmo"
EMPLOYER = "employer"
PAYER_KINDS = (HMO, EMPLOYER)
INVOICE_CURRENCY = "NGN"

DRAFT = "draft"
ISSUED = "issued"
PAID = "paid"
ALLOWED: dict[str, frozenset[str]] = {
    DRAFT: frozenset({ISSUED}),
    ISSUED: frozenset({PAID}),
    PAID: frozenset(),
}


def can_move(current: str, to: str) -> bool:
    return to in ALLOWED.get(current, frozenset())


def period_of(when: datetime) -> str:
    """The billing month (UTC) of a moment, ``YYYY-MM``."""
    return f"{as_utc(when):%Y-%m}"


def previous_period(now: datetime) -> str:
    moment = as_utc(now)
    year, month = (moment.year, moment.month - 1) if moment.month > 1 else (moment.year - 1, 12)
    return f"{year:04d}-{month:02d}"


def invoice_number(payer_kind: str, payer_id: str, environment: str, period: str) -> str:
    """``HMO-202611-AXA_MANSARD``, ``EMP-202611-01M87F79VEEDEV9Q6X7PMFWETH`` (the employer
    partner's whole id without ``ptn_``, upper case: a shorter cut could name two employers);
    sandbox invoices carry a ``T``: ``HMOT-202611-AXA_MANSARD``."""
    tag = "HMO" if payer_kind == HMO else "EMP"
    marker = "T" if environment == "test" else ""
    payer = payer_id if payer_kind == HMO else payer_id.removeprefix("ptn_").upper()
    return f"{tag}{marker}-{period.replace('-', '')}-{payer}"


def line_reference(number: str, line_number: int) -> str:
    """What ``session.completed`` carries as ``invoice_reference``: invoice number and line."""
    return f"{number}-{line_number:04d}"


def line_amounts(rate_minor: int, co_pay_minor: int) -> tuple[int, int]:
    """(amount, co-pay) of one session: the co-pay is capped at the amount (and at 0 below)."""
    amount = max(rate_minor, 0)
    return amount, min(max(co_pay_minor, 0), amount)


@dataclass(frozen=True)
class LineAmounts:
    amount_minor: int
    co_pay_minor: int


@dataclass(frozen=True)
class Totals:
    line_count: int
    amount_total_minor: int
    co_pay_total_minor: int
    payable_total_minor: int


def totals(lines: Iterable[LineAmounts]) -> Totals:
    items = list(lines)
    amount = sum(line.amount_minor for line in items)
    co_pay = sum(line.co_pay_minor for line in items)
    return Totals(
        line_count=len(items),
        amount_total_minor=amount,
        co_pay_total_minor=co_pay,
        payable_total_minor=amount - co_pay,
    )
