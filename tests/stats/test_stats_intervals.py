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
    UNIT_RANGE,
    Comparison,
    Quantity,
    ScoreMatrix,
    StatsWarning,
    bootstrap_interval,
    compare,
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


# ----------------------------------------------------------------- bounded measures
def test_a_t_interval_is_clipped_to_the_measures_range_and_says_so() -> None:
    # two queries, mean 0.8: the t interval is [-1.741, 3.341] (t = 12.71 with 1 df)
    plain = t_interval([0.6, 1.0])
    ref = stats.t.interval(0.95, 1, loc=0.8, scale=stats.sem([0.6, 1.0]))
    assert (plain.low, plain.high) == pytest.approx(ref, rel=1e-12)
    assert not plain.clipped
    bounded = t_interval([0.6, 1.0], bounds=UNIT_RANGE)
    assert (bounded.low, bounded.high, bounded.clipped) == (0.0, 1.0, True)
    # one end past the range: only that end moves
    one = t_interval([0.02, 0.0, 0.05, 0.01, 0.3], bounds=UNIT_RANGE)
    wide = t_interval([0.02, 0.0, 0.05, 0.01, 0.3])
    assert wide.low < 0 and one.low == 0.0 and one.high == wide.high and one.clipped
    # within the range nothing changes, and nothing is marked
    inside = t_interval([0.4, 0.5, 0.6, 0.5], bounds=UNIT_RANGE)
    assert inside == t_interval([0.4, 0.5, 0.6, 0.5])
    # values outside the bounds: the bounds do not hold for them, no clipping
    assert t_interval([-0.5, 0.9], bounds=UNIT_RANGE) == t_interval([-0.5, 0.9])
    summary = t_interval_from_summary(2, 0.8, math.sqrt(0.08), bounds=UNIT_RANGE)
    assert summary == bounded
    assert t_interval_from_summary(2, 1.5, 0.1, bounds=UNIT_RANGE).clipped is False
    with pytest.raises(InputError, match="low <= high"):
        t_interval_from_summary(3, 0.5, 0.1, bounds=(1.0, 0.0))


def test_measures_know_their_range() -> None:
    from rankscope.metrics.names import parse_measure

    for name in ("P@10", "ndcg@10", "ndcg", "map", "recall@100", "mrr", "hit@5", "bpref"):
        assert Quantity.of(parse_measure(name)).bounds == (0.0, 1.0), name
    for name in ("num_rel_ret", "dcg", "utility", "ndcg(0=-1,1=1)", "gm_map", "infAP"):
        assert Quantity.of(parse_measure(name)).bounds is None, name
    assert Quantity("latency_ms", higher_is_better=False).bounds is None


@pytest.mark.filterwarnings("ignore:only 2 queries")
def test_compare_clips_the_mean_intervals_of_a_bounded_measure() -> None:
    from rankscope.metrics.names import parse_measure

    x = np.array([[[0.6, 1.0], [0.1, 0.3]]])
    matrix = ScoreMatrix(
        ("a", "b"),
        ("q1", "q2"),
        (Quantity.of(parse_measure("ndcg@10")),),
        x,
        np.ones((2, 2), dtype=np.bool_),
        (0, 0),
        "two queries",
    )
    clipped = r"ndcg@10: the t interval of the mean of a, b .*\[0, 1\]"
    with pytest.warns(StatsWarning, match=clipped):
        found = compare(matrix, test="t")
    rows = found.measures[0].rows
    assert [(r.mean_interval.low, r.mean_interval.high) for r in rows] == [(0.0, 1.0), (0.0, 1.0)]
    assert all(r.mean_interval.clipped for r in rows)
    again = Comparison.from_dict(found.to_dict())
    assert [r.mean_interval for r in again.measures[0].rows] == [r.mean_interval for r in rows]
    # a quantity without a range (latency) keeps the plain t interval
    latency = ScoreMatrix(
        ("a", "b"),
        ("q1", "q2"),
        (Quantity("latency_ms", higher_is_better=False),),
        x,
        np.ones((2, 2), dtype=np.bool_),
        (0, 0),
        "two queries",
    )
    with pytest.warns(StatsWarning):
        plain = compare(latency, test="t")
    assert plain.measures[0].rows[0].mean_interval.low < 0
    assert not plain.measures[0].rows[0].mean_interval.clipped
