"""Planning figures: queries needed and minimum detectable difference (paired t power)."""

from __future__ import annotations

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
