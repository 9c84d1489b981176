"""Property tests for the outcome report arithmetic (docs/outcomes.md)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from fractions import Fraction
from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from rehabref.care.outcomes import adherence_rate, compute, pain_reduction_percentage
from rehabref.care.sessions import pain_reduction

scores = st.integers(min_value=0, max_value=10)


@given(initial=st.integers(min_value=1, max_value=10), final=scores)
def test_pain_reduction_is_the_exact_ratio_rounded_half_up_to_one_decimal(initial, final):
    result = pain_reduction_percentage(initial, final)
    exact = Fraction(initial - final, initial) * 100
    assert abs(Fraction(str(result)) - exact) <= Fraction(1, 20)
    assert -900 <= result <= 100
    assert (result > 0) == (final < initial)
    assert (result == 100) == (final == 0)


@given(final=st.one_of(st.none(), scores))
def test_initial_zero_or_missing_gives_null(final):
    assert pain_reduction_percentage(0, final) is None
    assert pain_reduction_percentage(None, final) is None


@given(
    initial=st.floats(min_value=0.1, max_value=10, allow_nan=False),
    final=st.floats(min_value=0, max_value=10, allow_nan=False),
)
def test_vas_decimals_stay_within_rounding(initial, final):
    result = pain_reduction_percentage(initial, final)
    assert abs(result - (initial - final) / initial * 100) <= 0.05 + 1e-9


@given(prescribed=st.integers(min_value=1, max_value=60), completed=st.integers(0, 80))
def test_adherence_is_a_half_up_whole_percentage(prescribed, completed):
    text = adherence_rate(completed, prescribed)
    assert text.endswith("%")
    value = int(text[:-1])
    exact = Fraction(completed * 100, prescribed)
    assert exact - Fraction(1, 2) < value <= exact + Fraction(1, 2)
    assert (value == 100) == (completed == prescribed) or prescribed > 100


def test_adherence_examples():
    assert adherence_rate(3, 6) == "50%"
    assert adherence_rate(2, 3) == "67%"
    assert adherence_rate(1, 8) == "13%"  # 12.5 rounds half up
    assert adherence_rate(5, 4) == "125%"
    assert adherence_rate(0, 0) == "0%"


@given(before=scores, after=scores)
def test_session_pain_reduction_points_and_percent(before, after):
    result = pain_reduction(before, after)
    assert result["points"] == before - after
    if before == 0:
        assert result["percentage"] is None
    else:
        assert abs(result["percentage"] - (before - after) * 100 / before) <= 0.05 + 1e-9


@given(
    pains=st.lists(st.tuples(scores, scores), min_size=1, max_size=8),
    recommended=st.one_of(st.none(), st.integers(1, 12)),
)
def test_compute_takes_first_and_last_points_in_time(pains, recommended):
    start = datetime(2026, 11, 1, 9, tzinfo=UTC)
    sessions = [
        SimpleNamespace(
            status="completed",
            check_in_at=start + timedelta(days=7 * index),
            check_out_at=start + timedelta(days=7 * index, minutes=45),
            pain_before=before,
            pain_after=after,
        )
        for index, (before, after) in enumerate(pains)
    ]
    referral = SimpleNamespace(recommended_sessions=recommended)
    outcome = compute(referral, list(reversed(sessions)), [])
    assert outcome.initial_pain == pains[0][0]
    assert outcome.final_pain == pains[-1][1]
    assert outcome.completed == len(pains)
    assert outcome.prescribed == (4 if recommended is None else recommended)
    assert outcome.pain_reduction == pain_reduction_percentage(pains[0][0], pains[-1][1])
    assert outcome.start == start
    assert outcome.end == sessions[-1].check_out_at
