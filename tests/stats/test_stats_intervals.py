"""Intervals of a mean: t against scipy; bootstrap percentile/BCa against scipy.stats.bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from rankscope.errors import InputError
from rankscope.stats import (
    bootstrap_interval,
    interval_from_bootstrap,
    t_interval,
    t_interval_from_summary,
)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 200), st.sampled_from([0.9, 0.95, 0.99]))
def test_t_interval_matches_scipy(seed: int, n: int, level: float) -> None:
    x = np.random.default_rng(seed).random(n)
    ours = t_interval(x, level)
    low, high = stats.t.interval(level, n - 1, loc=x.mean(), scale=stats.sem(x))
    assert (ours.low, ours.high) == pytest.approx((low, high), rel=1e-12)
    assert ours.method == "t" and ours.level == level
    summary = t_interval_from_summary(n, float(x.mean()), float(x.std(ddof=1)), level)
    assert (summary.low, summary.high) == pytest.approx((low, high), rel=1e-12)


@settings(max_examples=25, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(3, 80),
    st.sampled_from(["percentile", "bca"]),
    st.booleans(),
)
def test_interval_from_a_scipy_bootstrap_distribution_equals_scipys_interval(
    seed: int, n: int, method: str, grid: bool
) -> None:
    rng = np.random.default_rng(seed)
    x = rng.random(n) ** 2
    if grid:
        # whole numbers: every resampled mean equal to the estimate in exact arithmetic is
        # equal in floating point too (same integer sum, same division), so scipy's exact
        # comparisons and rankscope's rounding tolerance count the same ties
        x = np.round(x * 10)
    if np.ptp(x) == 0:
        return
    with np.errstate(all="ignore"):
        ref = stats.bootstrap(
            (x,), np.mean, n_resamples=999, method=method, rng=np.random.default_rng(seed)
        )
    ours = interval_from_bootstrap(x, ref.bootstrap_distribution, 0.95, method)  # type: ignore[arg-type]
    low, high = ref.confidence_interval
    if math.isnan(low) or math.isnan(high):
        return  # scipy's BCa gives up on some degenerate distributions; ours stays finite
    assert (ours.low, ours.high) == pytest.approx((low, high), rel=1e-10, abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(3, 40))
def test_bca_counts_ties_with_the_estimate_as_exact_arithmetic_does(seed: int, n: int) -> None:
    # Scores on a 0.1 grid (P@10): a resampled mean equal to the mean in exact arithmetic can
    # differ from it in the last bit. The same scores in tenths (whole numbers) are exact; the
    # BCa interval must not change with the unit beyond rounding.
    tenths = np.round(np.random.default_rng(seed).random(n) ** 2 * 10)
    if np.ptp(tenths) == 0:
        return
    exact = bootstrap_interval(tenths, resamples=999, seed=seed % 1000)
    scores = tenths / 10
    ours = bootstrap_interval(scores, resamples=999, seed=seed % 1000)
    assert (ours.low, ours.high) == pytest.approx((exact.low / 10, exact.high / 10), rel=1e-9)


def test_bca_tie_example() -> None:
    # with exact float comparisons, the share of resampled means below the mean of these P@10
    # values changed with the unit they were written in (the interval was [0.129, 0.571] in
    # tenths of a point, [0.143, 0.586] in whole points)
    tenths = np.array([3.0, 0.0, 1.0, 0.0, 6.0, 2.0, 0.0, 9.0])
    exact = bootstrap_interval(tenths, resamples=999, seed=5)
    ours = bootstrap_interval(tenths / 10, resamples=999, seed=5)
    assert (ours.low, ours.high) == pytest.approx((exact.low / 10, exact.high / 10), rel=1e-9)


def test_bootstrap_interval_agrees_with_scipy_within_sampling_error() -> None:
    x = np.random.default_rng(4).random(120) ** 3
    for method in ("percentile", "bca"):
        ours = bootstrap_interval(x, method=method, resamples=20_000, seed=1)  # type: ignore[arg-type]
        ref = stats.bootstrap(
            (x,), np.mean, n_resamples=20_000, method=method, rng=np.random.default_rng(2)
        ).confidence_interval
        se = x.std(ddof=1) / math.sqrt(x.size)
        assert ours.low == pytest.approx(ref.low, abs=0.05 * se)
        assert ours.high == pytest.approx(ref.high, abs=0.05 * se)
    assert bootstrap_interval(x, seed=1) == bootstrap_interval(x, seed=1)


def test_degenerate_intervals_are_finite() -> None:
    same = np.full(10, 0.3)
    flat = t_interval(same)
    assert flat.low == flat.high == pytest.approx(0.3)
    boot = bootstrap_interval(same, resamples=500)
    assert boot.low == pytest.approx(0.3) and boot.high == pytest.approx(0.3)
    one = t_interval([0.7])
    assert (one.low, one.high) == (0.7, 0.7)
    with pytest.raises(InputError, match="confidence level"):
        t_interval([0.1, 0.2], level=1.0)
    with pytest.raises(InputError, match="at least one value"):
        t_interval([])
    with pytest.raises(InputError, match="bootstrap interval"):
        bootstrap_interval([0.1, 0.2], method="basic")  # type: ignore[arg-type]
