"""ANOVA, Tukey HSD, randomised Tukey HSD and p-value corrections, against scipy.stats."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from scipy import stats

from rankscope.errors import InputError
from rankscope.stats import (
    adjust_pvalues,
    anova_two_way,
    pairwise,
    randomization_test,
    randomized_tukey_hsd,
    tukey_hsd,
)


def _scores(seed: int, m: int, n: int, grid: bool = False) -> NDArray[np.float64]:
    rng = np.random.default_rng(seed)
    topic = rng.random(n)
    x = np.clip(topic + rng.normal(0, 0.15, (m, n)) + rng.normal(0, 0.03, (m, 1)), 0, 1)
    return np.round(x, 1) if grid else x


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(3, 60), st.booleans())
def test_two_systems_anova_is_the_paired_t_test(seed: int, n: int, grid: bool) -> None:
    x = _scores(seed, 2, n, grid)
    d = x[0] - x[1]
    if np.ptp(d) < 1e-9:
        return
    a = anova_two_way(x)
    ref = stats.ttest_rel(x[0], x[1])
    assert a.f == pytest.approx(float(ref.statistic) ** 2, rel=1e-9, abs=1e-12)
    assert a.p_value == pytest.approx(float(ref.pvalue), rel=1e-7, abs=1e-12)


@settings(max_examples=8, deadline=None)  # studentized_range.ppf takes ~0.4 s
@given(st.integers(0, 2**32 - 1), st.integers(3, 60))
def test_two_systems_tukey_is_the_paired_t_test(seed: int, n: int) -> None:
    # With m = 2, V_E = var(d) / 2, so q = sqrt(2) |t| and the studentized range with 2 groups
    # gives the two-sided t p-value.
    x = _scores(seed, 2, n)
    result = tukey_hsd(x).pair(0, 1)
    ref = stats.ttest_rel(x[0], x[1])
    assert result.statistic == pytest.approx(math.sqrt(2) * float(ref.statistic), rel=1e-9)
    assert result.p_value == pytest.approx(float(ref.pvalue), rel=1e-5, abs=1e-9)
    low, high = ref.confidence_interval(0.95)
    assert result.interval.low == pytest.approx(float(low), rel=1e-5)
    assert result.interval.high == pytest.approx(float(high), rel=1e-5)


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(3, 8), st.integers(5, 80))
def test_tukey_against_studentized_range_and_anova(seed: int, m: int, n: int) -> None:
    x = _scores(seed, m, n)
    a = anova_two_way(x)
    # the sums of squares add up, and V_E is the residual mean square
    assert a.ss_systems + a.ss_queries + a.ss_residual == pytest.approx(a.ss_total)
    assert a.p_value == pytest.approx(float(stats.f.sf(a.f, m - 1, (m - 1) * (n - 1))))
    result = tukey_hsd(x)
    se = math.sqrt(a.ms_residual / n)
    q_crit = float(stats.studentized_range.ppf(0.95, m, a.df_residual))
    means = x.mean(axis=1)
    assert len(result.pairs) == m * (m - 1) // 2
    for r in result.pairs:
        delta = means[r.first] - means[r.second]
        assert r.delta == pytest.approx(delta)
        q = abs(delta) / se
        assert r.p_value == pytest.approx(
            float(stats.studentized_range.sf(q, m, a.df_residual)), rel=1e-9, abs=1e-12
        )
        assert r.interval.half_width == pytest.approx(q_crit * se)
        # the simultaneous interval excludes 0 exactly when p < 0.05
        if abs(r.p_value - 0.05) > 1e-6:
            assert (r.p_value < 0.05) == (not r.interval.contains(0.0))


def test_randomised_tukey_with_two_systems_is_the_randomization_test() -> None:
    # Permuting two scores within a query is a sign flip of their difference.
    x = _scores(3, 2, 16)
    exact = randomization_test(x[0], x[1]).p_value
    rt = randomized_tukey_hsd(x, resamples=20_000, seed=5).pair(0, 1)
    assert abs(rt.p_value - exact) < 5 * math.sqrt(exact * (1 - exact) / 20_000) + 1e-4


def test_randomised_tukey_is_family_wise_and_deterministic() -> None:
    x = _scores(11, 6, 120)
    x[2] += 0.12
    first = randomized_tukey_hsd(x, resamples=3000, seed=1)
    assert first == randomized_tukey_hsd(x, resamples=3000, seed=1)
    assert first.correction == "tukey" and first.resamples == 3000
    # more conservative than an unadjusted pairwise randomization test for every pair
    plain = pairwise(x, test="randomization", correction="none", resamples=3000, seed=1)
    for r in first.pairs:
        assert r.p_value >= plain.pair(r.first, r.second).p_value - 0.02
    assert first.pair(0, 2).p_value < 0.01
    # the largest gap decides the critical range: its interval half-width is shared
    widths = {round(r.interval.half_width, 12) for r in first.pairs}
    assert len(widths) == 1


def test_randomised_tukey_on_identical_systems() -> None:
    x = np.tile(_scores(2, 1, 30), (4, 1))
    result = randomized_tukey_hsd(x, resamples=500)
    assert all(r.p_value == 1.0 and r.delta == 0.0 for r in result.pairs)
    assert all(r.effect_size == 0.0 for r in result.pairs)


def test_constant_measure_anova_and_tukey_are_finite() -> None:
    x = np.ones((3, 10))
    a = anova_two_way(x)
    assert (a.f, a.p_value, a.ms_residual) == (0.0, 1.0, 0.0)
    for r in tukey_hsd(x).pairs:
        assert (r.p_value, r.effect_size, r.delta) == (1.0, 0.0, 0.0)
    # systems that differ by a constant on every query: no residual variance at all
    shifted = np.vstack([np.linspace(0, 1, 10), np.linspace(0, 1, 10) + 0.1])
    a = anova_two_way(shifted)
    assert math.isinf(a.f) and a.p_value == 0.0
    assert tukey_hsd(shifted).pair(0, 1).p_value == 0.0


def test_anova_and_tukey_refuse_bad_shapes() -> None:
    with pytest.raises(InputError, match="two systems"):
        anova_two_way(np.ones((1, 10)))
    with pytest.raises(InputError, match="2-D"):
        tukey_hsd(np.ones(10))
    with pytest.raises(InputError, match="at least 2 queries"):
        tukey_hsd(np.ones((3, 1)))


# ----------------------------------------------------------------------------- corrections
@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_benjamini_hochberg_matches_scipy(p: list[float]) -> None:
    ours = adjust_pvalues(p, "bh")
    assert ours == pytest.approx(stats.false_discovery_control(p, method="bh"), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_holm_lies_between_raw_and_bonferroni(p: list[float]) -> None:
    raw = np.asarray(p)
    holm = adjust_pvalues(p, "holm")
    bonferroni = adjust_pvalues(p, "bonferroni")
    assert np.all(holm >= raw - 1e-15) and np.all(holm <= bonferroni + 1e-15)
    assert np.all(holm <= 1.0)
    order = np.argsort(raw, kind="stable")
    assert np.all(np.diff(holm[order]) >= -1e-15)  # step-down keeps the order


def test_corrections_by_hand() -> None:
    p = [0.01, 0.04, 0.03, 0.005]
    assert adjust_pvalues(p, "bonferroni").tolist() == pytest.approx([0.04, 0.16, 0.12, 0.02])
    # Holm: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 -> 0.02, 0.03, 0.06, 0.04 -> max-acc
    assert adjust_pvalues(p, "holm").tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # BH: times 4/rank: 0.02, 0.02, 0.04, 0.04
    assert adjust_pvalues(p, "bh").tolist() == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert adjust_pvalues(p, "none").tolist() == p
    with pytest.raises(InputError, match="unknown correction"):
        adjust_pvalues(p, "sidak")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="between 0 and 1"):
        adjust_pvalues([0.5, 1.5], "holm")


def test_pairwise_corrects_over_all_pairs() -> None:
    x = _scores(8, 4, 50)
    raw = pairwise(x, test="t", correction="none")
    holm = pairwise(x, test="t", correction="holm")
    assert holm.correction == "holm" and len(holm.pairs) == 6
    expected = adjust_pvalues([r.p_value for r in raw.pairs], "holm")
    assert [r.p_adjusted for r in holm.pairs] == pytest.approx(expected.tolist())
    matrix = holm.p_matrix()
    assert matrix.shape == (4, 4) and np.allclose(matrix, matrix.T)
    assert np.all(np.diag(matrix) == 1.0)
    tukey = pairwise(x, test="tukey", correction="bh")
    assert tukey.correction == "tukey"  # Tukey's p-values are family-wise already
