"""Property tests of the commission arithmetic (integer minor units, floored basis points)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rehabref.referrals.commission import MAX_AMOUNT_MINOR, commission_for, record_for

amounts = st.integers(min_value=0, max_value=MAX_AMOUNT_MINOR)
rates = st.integers(min_value=0, max_value=10_000)
fixeds = st.integers(min_value=0, max_value=MAX_AMOUNT_MINOR)


@given(amounts, rates)
def test_basis_points_are_the_exact_floor(amount, bps):
    commission = commission_for(amount, bps=bps, fixed_minor=None)
    exact = Fraction(amount * bps, 10_000)
    assert isinstance(commission, int)
    assert commission <= exact < commission + 1
    assert 0 <= commission <= amount


@given(amounts, fixeds)
def test_fixed_commission_is_capped_at_the_amount(amount, fixed):
    assert commission_for(amount, bps=None, fixed_minor=fixed) == min(fixed, amount)


@given(amounts, st.one_of(st.none(), rates), st.one_of(st.none(), fixeds))
def test_commission_never_exceeds_the_payment_and_is_never_negative(amount, bps, fixed):
    commission = commission_for(amount, bps=bps, fixed_minor=fixed)
    assert 0 <= commission <= amount
    by_rate = Fraction(amount * (bps or 0), 10_000)
    assert commission <= by_rate + min(fixed or 0, amount)


@given(amounts, amounts, rates)
def test_commission_grows_with_the_amount(a, b, bps):
    low, high = sorted((a, b))
    assert commission_for(low, bps=bps, fixed_minor=None) <= commission_for(
        high, bps=bps, fixed_minor=None
    )


@given(amounts)
def test_no_agreement_means_no_commission(amount):
    record = record_for(currency="NGN", amount_minor=amount, bps=None, fixed_minor=None)
    assert record.commission_minor == 0 and record.commission_status == "not_eligible"
    zero = record_for(currency="NGN", amount_minor=amount, bps=0, fixed_minor=0)
    assert zero.commission_minor == 0 and zero.commission_status == "not_eligible"


@given(amounts, st.integers(min_value=1, max_value=10_000))
def test_an_agreement_makes_the_commission_pending_settlement(amount, bps):
    record = record_for(currency="NGN", amount_minor=amount, bps=bps, fixed_minor=None)
    assert record.commission_status == "pending_settlement"


def test_worked_examples_of_the_rounding():
    assert commission_for(2_000_000, bps=1000, fixed_minor=None) == 200_000  # NGN 20,000 at 10%
    assert commission_for(999, bps=1000, fixed_minor=None) == 99  # 99.9 floors to 99
    assert commission_for(1, bps=9_999, fixed_minor=None) == 0
    assert commission_for(100, bps=500, fixed_minor=10) == 15
    assert commission_for(10, bps=10_000, fixed_minor=10) == 10  # capped at the amount


@pytest.mark.parametrize(
    "kwargs",
    [
        {"amount_minor": -1, "bps": 10, "fixed_minor": None},
        {"amount_minor": 1, "bps": 10_001, "fixed_minor": None},
        {"amount_minor": 1, "bps": -1, "fixed_minor": None},
        {"amount_minor": 1, "bps": None, "fixed_minor": -1},
    ],
)
def test_out_of_range_inputs_are_refused(kwargs):
    amount = kwargs.pop("amount_minor")
    with pytest.raises(ValueError):
        commission_for(amount, **kwargs)
