"""The pure parts of HMO and employer billing: numbers, line amounts, totals (property
tests), the state table, remittance parsing and the allowance rule. No clock, no database."""

from __future__ import annotations

import itertools
from datetime import UTC, date, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rehabref.billing import remittance
from rehabref.billing.payer_invoice_csv import text_cell
from rehabref.billing.payer_invoices import (
    ALLOWED,
    LineAmounts,
    can_move,
    invoice_number,
    line_amounts,
    line_reference,
    period_of,
    previous_period,
    totals,
)
from rehabref.eligibility.allowance import allowance_refusal
from rehabref.errors import ApiError

kobo = st.integers(min_value=0, max_value=10**11)
lines = st.lists(st.tuples(kobo, kobo), max_size=60)


@given(lines)
def test_totals_are_integer_sums_and_payable_is_amount_minus_co_pay(
    pairs: list[tuple[int, int]],
) -> None:
    items = [LineAmounts(*line_amounts(rate, co_pay)) for rate, co_pay in pairs]
    total = totals(items)
    assert total.line_count == len(pairs)
    assert total.amount_total_minor == sum(rate for rate, _ in pairs)
    assert total.co_pay_total_minor == sum(min(co_pay, rate) for rate, co_pay in pairs)
    assert total.payable_total_minor == total.amount_total_minor - total.co_pay_total_minor
    assert all(0 <= item.co_pay_minor <= item.amount_minor for item in items)
    assert all(isinstance(value, int) for value in vars(total).values())


@given(lines, st.integers(min_value=0, max_value=60))
def test_totals_do_not_depend_on_grouping(pairs: list[tuple[int, int]], cut: int) -> None:
    items = [LineAmounts(*line_amounts(rate, co_pay)) for rate, co_pay in pairs]
    whole, left, right = totals(items), totals(items[:cut]), totals(items[cut:])
    assert whole.payable_total_minor == left.payable_total_minor + right.payable_total_minor
    assert whole.co_pay_total_minor == left.co_pay_total_minor + right.co_pay_total_minor


def test_co_pay_is_capped_at_the_amount() -> None:
    assert line_amounts(1_500_000, 250_000) == (1_500_000, 250_000)
    assert line_amounts(100, 250_000) == (100, 100)
    assert line_amounts(100, -5) == (100, 0)


def test_numbers_name_payer_environment_and_month() -> None:
    assert invoice_number("hmo", "AXA_MANSARD", "live", "2026-11") == "HMO-202611-AXA_MANSARD"
    assert invoice_number("hmo", "AXA_MANSARD", "test", "2026-11") == "HMOT-202611-AXA_MANSARD"
    partner = "ptn_01jd3k8e5v0m2c7h4q9w1x6y3z"
    assert invoice_number("employer", partner, "live", "2026-01") == (
        "EMP-202601-01JD3K8E5V0M2C7H4Q9W1X6Y3Z"
    )
    # Two employers whose ids end alike still get two invoices.
    other = "ptn_01jd3k8e5v0m2c7h4q9w0x6y3z"
    assert invoice_number("employer", other, "live", "2026-01") != invoice_number(
        "employer", partner, "live", "2026-01"
    )
    assert line_reference("HMO-202611-AXA_MANSARD", 7) == "HMO-202611-AXA_MANSARD-0007"


@pytest.mark.parametrize(
    ("now", "period"),
    [
        (datetime(2026, 1, 1, 0, 0, tzinfo=UTC), "2025-12"),
        (datetime(2026, 3, 31, 23, 59, tzinfo=UTC), "2026-02"),
        (datetime(2026, 12, 15, tzinfo=UTC), "2026-11"),
    ],
)
def test_previous_period(now: datetime, period: str) -> None:
    assert previous_period(now) == period
    assert period_of(now) == f"{now:%Y-%m}"


def test_the_state_table_allows_only_draft_issued_paid() -> None:
    states = list(ALLOWED)
    legal = {(a, b) for a, b in itertools.product(states, states) if can_move(a, b)}
    assert legal == {("draft", "issued"), ("issued", "paid")}
    assert not can_move("paid", "draft") and not can_move("bogus", "paid")


HEADER = "invoice_number,amount_paid_minor,paid_on,remittance_reference\n"
TODAY = date(2026, 11, 24)


def test_remittance_rows_are_parsed() -> None:
    rows = remittance.parse(
        "\ufeff" + HEADER + "HMO-202610-AXA_MANSARD,4800000,2026-11-20,AXA-RMT-0042\n\n",
        today=TODAY,
    )
    assert [(r.line, r.invoice_number, r.amount_paid_minor) for r in rows] == [
        (2, "HMO-202610-AXA_MANSARD", 4_800_000)
    ]
    assert rows[0].paid_on == date(2026, 11, 20)


@pytest.mark.parametrize(
    ("body", "where", "fragment"),
    [
        ("a,b\n", "file", "header"),
        (HEADER, "file", "No rows"),
        (HEADER + "X,1,2026-11-01\n", "row 2", "columns"),
        (HEADER + ",1,2026-11-01,R\n", "row 2", "empty"),
        (HEADER + "X,-1,2026-11-01,R\n", "row 2", "whole number"),
        (HEADER + "X,1,01/11/2026,R\n", "row 2", "YYYY-MM-DD"),
        (HEADER + "X,1,2026-11-25,R\n", "row 2", "future"),
        (HEADER + "X,1,2026-11-01,=cmd()\n", "row 2", "remittance_reference"),
        (HEADER + "X,1,2026-11-01," + "R" * 200_000 + "\n", "file", "field limit"),
    ],
)
def test_bad_remittance_files_are_refused_with_the_row(
    body: str, where: str, fragment: str
) -> None:
    with pytest.raises(ApiError) as caught:
        remittance.parse(body, today=TODAY)
    assert caught.value.status == 422
    assert fragment in caught.value.fields[where]


@given(st.integers(min_value=0, max_value=50), st.integers(min_value=0, max_value=50))
def test_a_session_is_refused_exactly_when_none_is_left(remaining: int, scheduled: int) -> None:
    refusal = allowance_refusal(remaining, scheduled)
    assert (refusal is None) == (scheduled < remaining)
    if refusal is not None:
        assert (refusal.status, refusal.code) == (409, "allowance_exceeded")


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("AXA-00012345", "AXA-00012345"),
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("+2348031234567", "'+2348031234567"),
        ("-1", "'-1"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tTab", "'\tTab"),
        (None, ""),
    ],
)
def test_free_text_cells_never_start_a_formula(value: str | None, shown: str) -> None:
    assert text_cell(value) == shown
