"""Planning figures: queries needed and minimum detectable difference (paired t power)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from rankscope.errors import InputError
from rankscope.stats import (
    min_detectable_delta,
    paired_t_power,
    power_plan,
    queries_needed,
)


@pytest.mark.parametrize(
    ("effect", "expected"),
    # G*Power 3.1, "Means: difference between two dependent means (matched pairs)", two tails,
    # alpha 0.05, power 0.8: total sample size for effect size dz
    [(0.8, 15), (0.5, 34), (0.3, 90), (0.2, 199)],
)
def test_queries_needed_match_published_sample_sizes(effect: float, expected: int) -> None:
    assert queries_needed(effect * 0.2, 0.2) == expected
    assert paired_t_power(effect * 0.2, 0.2, expected) >= 0.8
    assert paired_t_power(effect * 0.2, 0.2, expected - 1) < 0.8


def test_power_agrees_with_simulated_paired_t_tests() -> None:
    rng = np.random.default_rng(0)
    n, delta, sd, trials = 20, 0.05, 0.1, 4000
    d = rng.normal(delta, sd, (trials, n))
    rejected = stats.ttest_rel(d, np.zeros_like(d), axis=1).pvalue < 0.05
    simulated = float(rejected.mean())
    assert paired_t_power(delta, sd, n) == pytest.approx(simulated, abs=0.025)


def test_minimum_detectable_delta_inverts_queries_needed() -> None:
    for n in (10, 50, 225, 5000):
        mdd = min_detectable_delta(n, 0.25)
        assert paired_t_power(mdd, 0.25, n) == pytest.approx(0.8, abs=1e-9)
        assert queries_needed(mdd * 1.0001, 0.25) <= n  # type: ignore[operator]
    assert min_detectable_delta(50, 0.25, alpha=0.01) > min_detectable_delta(50, 0.25)
    assert min_detectable_delta(50, 0.25, power=0.9) > min_detectable_delta(50, 0.25)


def test_degenerate_planning_inputs() -> None:
    assert queries_needed(0.0, 0.2) is None  # no number of queries detects no difference
    assert queries_needed(0.05, 0.0) == 2  # no spread: any difference is certain
    assert min_detectable_delta(10, 0.0) == 0.0
    assert queries_needed(1e-6, 1.0) is None  # more than ten million queries
    with pytest.raises(InputError, match="power"):
        queries_needed(0.1, 0.2, power=1.0)
    with pytest.raises(InputError, match="alpha"):
        min_detectable_delta(10, 0.2, alpha=0.0)
    with pytest.raises(InputError, match="standard deviation"):
        queries_needed(0.1, -1.0)


def test_power_plan_from_observed_differences() -> None:
    rng = np.random.default_rng(3)
    d = rng.normal(0.03, 0.12, 60)
    plan = power_plan(d)
    assert plan.queries == 60
    assert plan.sd_difference == pytest.approx(d.std(ddof=1))
    assert plan.delta == pytest.approx(abs(d.mean()))
    assert plan.queries_needed == queries_needed(abs(d.mean()), d.std(ddof=1))
    assert plan.min_detectable_delta == pytest.approx(min_detectable_delta(60, d.std(ddof=1)))
    chosen = power_plan(d, delta=0.05)
    assert chosen.delta == 0.05 and chosen.queries_needed == queries_needed(0.05, d.std(ddof=1))


# scipy's noncentral t answers NaN for the far lower tail (P(T < -t_crit)) once nc is a few
# units; the power must then be the upper tail alone, not the normal approximation.
@pytest.mark.parametrize(
    ("delta", "queries", "alpha", "expected"),
    [(1.5, 15, 0.001, 0.9147), (5.0, 3, 0.01, 0.5306)],
)
def test_power_where_scipy_loses_the_lower_tail(
    delta: float, queries: int, alpha: float, expected: float
) -> None:
    df = queries - 1
    nc = delta * np.sqrt(queries)
    t_crit = stats.t.ppf(1 - alpha / 2, df)
    assert np.isnan(stats.nct.cdf(-t_crit, df, nc))  # the case being tested
    upper = float(stats.nct.sf(t_crit, df, nc))
    lower = float(stats.nct.sf(t_crit, df, -nc))  # the same tail by symmetry: 0 here
    assert lower == 0.0
    power = paired_t_power(delta, 1.0, queries, alpha=alpha)
    assert power == pytest.approx(upper + lower, rel=1e-12)
    assert round(power, 4) == expected
    # simulation: 200,000 paired t tests; 5 standard errors are at most 0.0056
    rng = np.random.default_rng(queries)
    trials = 200_000
    d = rng.normal(delta, 1.0, (trials, queries))
    t = d.mean(axis=1) / (d.std(axis=1, ddof=1) / np.sqrt(queries))
    simulated = float((np.abs(t) > t_crit).mean())
    assert abs(power - simulated) <= 5 * np.sqrt(power * (1 - power) / trials)


def _reference_power(delta: float, queries: int, alpha: float) -> float:
    """Both tails from scipy's survival function (the lower one by symmetry of nct)."""
    df = queries - 1
    nc = delta * np.sqrt(queries)
    t_crit = stats.t.ppf(1 - alpha / 2, df)
    return float(stats.nct.sf(t_crit, df, nc) + stats.nct.sf(t_crit, df, -nc))


def test_queries_needed_on_a_grid_against_scipy() -> None:
    wrong = []
    for effect in (0.5, 0.8, 1.0, 1.2, 1.4, 1.6, 2.0, 2.5, 3.0, 4.0, 5.0):
        for alpha in (0.001, 0.005, 0.01, 0.05, 0.1):
            for power in (0.5, 0.8, 0.9, 0.95, 0.99):
                n = 2
                while _reference_power(effect, n, alpha) < power:
                    n += 1
                if queries_needed(effect, 1.0, alpha=alpha, power=power) != n:
                    wrong.append((effect, alpha, power, n))
    assert wrong == []


def test_min_detectable_delta_with_few_queries_and_a_small_alpha() -> None:
    mdd = min_detectable_delta(3, 1.0, alpha=0.01)
    assert round(mdd, 2) == 7.32  # the normal approximation of the power gave 6.53
    assert _reference_power(mdd, 3, 0.01) == pytest.approx(0.8, abs=1e-9)


def test_power_tends_to_alpha_as_delta_tends_to_zero() -> None:
    # both tails of the two-sided test: without P(T < -t_crit) the power at delta -> 0 is
    # alpha / 2, and 0.047 instead of 0.059 at delta 0.1, sd 1, 10 queries
    for alpha in (0.05, 0.01):
        assert paired_t_power(1e-9, 1.0, 10, alpha) == pytest.approx(alpha, rel=1e-6)
        assert paired_t_power(-1e-9, 1.0, 10, alpha) == pytest.approx(alpha, rel=1e-6)
    t_crit = stats.t.ppf(0.975, 9)
    nc = 0.1 * math.sqrt(10)
    both = stats.nct.sf(t_crit, 9, nc) + stats.nct.cdf(-t_crit, 9, nc)
    assert paired_t_power(0.1, 1.0, 10) == pytest.approx(float(both), rel=1e-12)
    assert round(paired_t_power(0.1, 1.0, 10), 3) == 0.059
