"""The non-inferiority bound and p-value against scipy's one-sided paired t test."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from rankscope.errors import InputError
from rankscope.stats import non_inferiority


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(2, 300),
    st.floats(0.0, 0.1),
    st.sampled_from([0.01, 0.05, 0.1]),
)
def test_the_bound_and_p_are_scipys(seed: int, n: int, margin: float, alpha: float) -> None:
    rng = np.random.default_rng(seed)
    base = rng.uniform(0, 1, n)
    cand = np.clip(base + rng.normal(-0.02, 0.1, n), 0, 1)
    found = non_inferiority(cand, base, margin=margin, alpha=alpha)
    if np.ptp(cand - base) == 0:
        return
    shifted = scipy_stats.ttest_rel(cand + margin, base, alternative="greater")
    assert found.p_value == pytest.approx(shifted.pvalue, rel=1e-9, abs=1e-300)
    plain = scipy_stats.ttest_rel(cand, base, alternative="greater")
    low = plain.confidence_interval(1 - alpha).low
    assert found.lower == pytest.approx(low, rel=1e-9, abs=1e-12)
    assert found.delta == pytest.approx(float(np.mean(cand - base)), abs=1e-12)
    # the decision and the test agree: inferior exactly when H0 is not rejected
    assert found.inferior == (found.p_value > alpha) or abs(found.lower + margin) < 1e-12


def test_constant_differences() -> None:
    base = np.linspace(0, 1, 10)
    same = non_inferiority(base, base, margin=0.0)
    assert (same.delta, same.lower, same.p_value, same.inferior) == (0.0, 0.0, 1.0, False)
    lower = non_inferiority(base - 0.02, base, margin=0.01)
    assert lower.lower == pytest.approx(-0.02) and lower.inferior and lower.p_value == 1.0
    assert not non_inferiority(base - 0.005, base, margin=0.01).inferior


def test_bad_input() -> None:
    a = np.ones(5)
    with pytest.raises(InputError, match="margin"):
        non_inferiority(a, a, margin=-0.1)
    with pytest.raises(InputError, match="margin"):
        non_inferiority(a, a, margin=float("inf"))
    with pytest.raises(InputError, match="alpha"):
        non_inferiority(a, a, margin=0.1, alpha=0.0)
    with pytest.raises(InputError):
        non_inferiority(np.ones(1), np.ones(1), margin=0.1)
    with pytest.raises(InputError):
        non_inferiority(np.ones(3), np.ones(4), margin=0.1)
    with pytest.raises(InputError):
        non_inferiority([1.0, float("nan"), 0.5], [1.0, 1.0, 1.0], margin=0.1)
