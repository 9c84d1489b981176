"""Commission statement policy: periods, totals, money text (pure, no database)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rehabref.billing.statements import (
    PaidReferral,
    PeriodError,
    build_statement,
    period_bounds,
    period_is_over,
)
from rehabref.money import format_money
from rehabref.referrals.commission import MAX_AMOUNT_MINOR, commission_for

_START = datetime(2026, 10, 1, tzinfo=UTC)


def test_a_period_is_its_whole_utc_month_and_december_rolls_into_the_next_year() -> None:
    assert period_bounds("2026-10") == (_START, datetime(2026, 11, 1, tzinfo=UTC))
    assert period_bounds("2026-12") == (
        datetime(2026, 12, 1, tzinfo=UTC),
        datetime(2027, 1, 1, tzinfo=UTC),
    )
    assert period_is_over("2026-10", datetime(2026, 11, 1, tzinfo=UTC))
    assert not period_is_over("2026-11", datetime(2026, 11, 30, 23, 59, tzinfo=UTC))


@pytest.mark.parametrize("bad", ["2026-13", "2026-00", "26-10", "2026-1", "1999-12", "", "x"])
def test_a_malformed_period_is_refused(bad: str) -> None:
    with pytest.raises(PeriodError):
        period_bounds(bad)


def test_money_is_formatted_from_integer_kobo() -> None:
    assert format_money(2_000_000, "NGN") == "NGN 20,000.00"
    assert format_money(5, "NGN") == "NGN 0.05"
    assert format_money(123_456_789, "NGN") == "NGN 1,234,567.89"


@given(
    bps=st.integers(min_value=1, max_value=10_000),
    amounts=st.lists(st.integers(min_value=0, max_value=MAX_AMOUNT_MINOR), max_size=40),
)
def test_totals_are_the_sums_of_the_lines_and_each_line_is_the_agreed_rate(
    bps: int, amounts: list[int]
) -> None:
    paid = [
        PaidReferral(
            referral_id=f"ref_{index:04d}",
            paid_at=_START + timedelta(hours=(index * 7919) % 700),
            currency="NGN",
            amount_minor=amount,
            commission_minor=commission_for(amount, bps=bps, fixed_minor=None),
        )
        for index, amount in enumerate(amounts)
    ]
    draft = build_statement(paid)
    assert draft.commission_total_minor == sum(line.commission_minor for line in draft.lines)
    assert draft.amount_total_minor == sum(line.amount_minor for line in draft.lines)
    for line in draft.lines:
        # Floored to the kobo: never more than the rate, less by under one kobo.
        assert line.commission_minor == line.amount_minor * bps // 10_000
        assert 0 <= line.amount_minor * bps - line.commission_minor * 10_000 < 10_000
    # Zero-commission lines (tiny amounts) are left off; no kobo of commission is lost.
    assert draft.commission_total_minor == sum(item.commission_minor for item in paid)
    assert [line.paid_at for line in draft.lines] == sorted(line.paid_at for line in draft.lines)


def test_only_lines_in_the_statement_currency_are_counted() -> None:
    paid = [
        PaidReferral("ref_b", _START, "NGN", 1_000_000, 100_000),
        PaidReferral("ref_a", _START, "USD", 5_000, 500),
    ]
    draft = build_statement(paid)
    assert [line.referral_id for line in draft.lines] == ["ref_b"]
    assert (draft.amount_total_minor, draft.commission_total_minor) == (1_000_000, 100_000)
