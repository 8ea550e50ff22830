"""Welch's t test and the two-sample bootstrap interval against scipy.stats."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from rankscope.errors import InputError
from rankscope.stats import bootstrap_difference, welch_t

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# scores as measures give them; differences near the underflow limit (variances below 1e-300,
# where scipy's own arithmetic gives NaN or a wrong df) have their own tests below
values = st.lists(
    st.floats(0, 1, allow_nan=False).filter(lambda v: v == 0 or v >= 1e-100),
    min_size=2,
    max_size=40,
)


@pytest.mark.filterwarnings("ignore:Precision loss occurred:RuntimeWarning")
@SETTINGS
@given(values, values)
def test_welch_matches_scipy(a: list[float], b: list[float]) -> None:
    result = welch_t(a, b)
    x, y = np.asarray(a), np.asarray(b)
    if np.ptp(x) == 0 and np.ptp(y) == 0:
        return  # scipy gives NaN; the degenerate cases are checked below
    ref = stats.ttest_ind(x, y, equal_var=False)
    assert result.statistic == pytest.approx(float(ref.statistic), rel=1e-9, abs=1e-9)
    assert result.p_value == pytest.approx(float(ref.pvalue), rel=1e-7, abs=1e-12)
    ci = ref.confidence_interval(0.95)
    assert result.interval.low == pytest.approx(float(ci.low), rel=1e-7, abs=1e-9)
    assert result.interval.high == pytest.approx(float(ci.high), rel=1e-7, abs=1e-9)
    # the Welch-Satterthwaite degrees of freedom in exact arithmetic (scipy's own squares
    # underflow for variances near 1e-170: its df is then off, ours is not)
    assert result.df == pytest.approx(float(_exact_welch_df(a, b)), rel=1e-9)
    assert result.delta == pytest.approx(x.mean() - y.mean())


def _exact_welch_df(a: list[float], b: list[float]) -> Fraction:
    def share(values: list[float]) -> Fraction:
        exact = [Fraction(v) for v in values]
        n = len(exact)
        mean = sum(exact, Fraction(0)) / n
        return sum(((v - mean) ** 2 for v in exact), Fraction(0)) / (n - 1) / n

    sa, sb = share(a), share(b)
    return (sa + sb) ** 2 / (sa**2 / (len(a) - 1) + sb**2 / (len(b) - 1))


def test_welch_degrees_of_freedom_with_a_tiny_variance() -> None:
    # the variance of [0, 1e-160] is about 5e-321: its square underflowed to 0 and the
    # Welch-Satterthwaite degrees of freedom divided by zero
    for a, b in (([0.0, 1e-160], [0.5, 0.5]), ([0.0, 1e-160, 2e-160], [0.3] * 4)):
        result = welch_t(a, b)
        # b has no spread: the degrees of freedom are a's alone, n_a - 1
        assert result.df == len(a) - 1
        assert result.p_value == 0.0 and result.statistic < -1e159


def test_effect_size_is_cohens_d_with_pooled_sd() -> None:
    a = [0.2, 0.4, 0.6, 0.8]
    b = [0.1, 0.2, 0.3]
    pooled = math.sqrt((3 * np.var(a, ddof=1) + 2 * np.var(b, ddof=1)) / 5)
    assert welch_t(a, b).effect_size == pytest.approx((0.5 - 0.2) / pooled)


def test_degenerate_samples() -> None:
    same = welch_t([0.5, 0.5], [0.5, 0.5, 0.5])
    assert (same.statistic, same.p_value, same.interval.low, same.interval.high) == (
        0.0,
        1.0,
        0.0,
        0.0,
    )
    shifted = welch_t([1.0, 1.0], [0.0, 0.0])
    assert shifted.statistic == math.inf and shifted.p_value == 0.0 and shifted.df == 2.0
    with pytest.raises(InputError, match="at least 2 values"):
        welch_t([1.0], [0.0, 1.0])
    with pytest.raises(InputError, match="NaN"):
        welch_t([1.0, math.nan], [0.0, 1.0])


def test_bootstrap_interval_matches_scipy_percentile() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.random(60), rng.random(45) * 0.8
    ours = bootstrap_difference(a, b, resamples=20_000, seed=1)
    ref = stats.bootstrap(
        (a, b),
        lambda x, y, axis: x.mean(axis=axis) - y.mean(axis=axis),
        method="percentile",
        n_resamples=20_000,
        random_state=np.random.default_rng(7),
    ).confidence_interval
    # different random draws: the two estimates of the same quantiles agree to Monte Carlo error
    assert ours.low == pytest.approx(float(ref.low), abs=0.01)
    assert ours.high == pytest.approx(float(ref.high), abs=0.01)
    assert ours == bootstrap_difference(a, b, resamples=20_000, seed=1)  # seeded
    with_boot = welch_t(a, b, bootstrap=2000, seed=5)
    assert with_boot.bootstrap is not None and with_boot.resamples == 2000
    assert with_boot.bootstrap.contains(with_boot.delta)


def test_welch_interval_covers_at_its_level() -> None:
    # 2,000 simulated A/B tests with unequal variances and sizes: the 95% interval of the
    # difference covers the true difference (0.1) in 95% +- 1.5% of them
    rng = np.random.default_rng(11)
    covered = 0
    for _ in range(2000):
        a = rng.normal(0.6, 0.3, 25)
        b = rng.normal(0.5, 0.1, 60)
        covered += welch_t(a, b).interval.contains(0.1)
    assert 0.935 <= covered / 2000 <= 0.965


@pytest.mark.parametrize("scale", [1e-163, 1e-300, 1e200])
def test_welch_near_under_and_overflow_is_the_scaled_test(scale: float) -> None:
    # standard deviations of 1e-163 squared to 0 (t = -inf, p = 0: a false "significant"),
    # of 1e200 to inf; the test is scale-free, so it must equal the test on 0, 1, 2 vs 1, 2, 3
    a, b = [0.0, 1.0, 2.0], [1.0, 2.0, 3.5]
    plain = welch_t(a, b)
    scaled = welch_t([v * scale for v in a], [v * scale for v in b])
    ref = stats.ttest_ind(a, b, equal_var=False)
    assert plain.statistic == pytest.approx(float(ref.statistic), rel=1e-12)
    assert scaled.statistic == pytest.approx(plain.statistic, rel=1e-12)
    assert scaled.p_value == pytest.approx(plain.p_value, rel=1e-12)
    assert 0.2 < scaled.p_value < 0.5
    assert scaled.df == pytest.approx(plain.df, rel=1e-12)
    assert scaled.effect_size == pytest.approx(plain.effect_size, rel=1e-12)
    assert scaled.delta == pytest.approx(plain.delta * scale, rel=1e-12)
    assert scaled.interval.low == pytest.approx(plain.interval.low * scale, rel=1e-12)
    assert scaled.interval.high == pytest.approx(plain.interval.high * scale, rel=1e-12)
