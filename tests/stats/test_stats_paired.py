"""Paired tests against scipy.stats on generated data, degenerate inputs, determinism."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from itertools import combinations_with_replacement, product
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from scipy import stats

from rankscope.errors import InputError
from rankscope.stats import (
    PairedTest,
    StatsWarning,
    WinsTiesLosses,
    _resample,
    bootstrap_test,
    paired_t,
    randomization_test,
    sign_test,
    wilcoxon_test,
    wins_ties_losses,
)
from rankscope.stats.compare import pairwise
from rankscope.stats.paired import differences, randomization_pvalues

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def paired_scores(
    draw: st.DrawFn, min_n: int = 2, max_n: int = 40, grid: bool | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Two per-query score vectors in [0, 1]: continuous, or on a 0.1 grid (P@10-like, with
    ties and zero differences)."""
    n = draw(st.integers(min_n, max_n))
    seed = draw(st.integers(0, 2**32 - 1))
    on_grid = draw(st.booleans()) if grid is None else grid
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    b = np.clip(a + rng.normal(draw(st.floats(-0.2, 0.2)), 0.2, n), 0, 1)
    if on_grid:
        a, b = np.round(a, 1), np.round(b, 1)
    return a, b


def _not_constant(d: NDArray[np.float64]) -> bool:
    return bool(np.ptp(d) > 1e-9)


# ----------------------------------------------------------------------------- t test
@SETTINGS
@given(paired_scores())
def test_paired_t_matches_scipy(data: tuple[NDArray[np.float64], NDArray[np.float64]]) -> None:
    a, b = data
    ours = paired_t(a, b)
    if not _not_constant(a - b):
        assert math.isinf(ours.statistic) or ours.statistic == 0.0
        return
    ref = stats.ttest_rel(a, b)
    assert ours.statistic == pytest.approx(float(ref.statistic), rel=1e-9, abs=1e-12)
    assert ours.p_value == pytest.approx(float(ref.pvalue), rel=1e-9, abs=1e-15)
    low, high = ref.confidence_interval(0.95)
    assert ours.interval.low == pytest.approx(float(low), abs=1e-12)
    assert ours.interval.high == pytest.approx(float(high), abs=1e-12)
    d = a - b
    assert ours.effect_size == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-9)
    assert ours.n == a.size and ours.wins + ours.ties + ours.losses == a.size


# ----------------------------------------------------------------------------- randomization
def _scipy_sign_flip_p(d: NDArray[np.float64], resamples: float, seed: int = 0) -> float:
    result = stats.permutation_test(
        (d,),
        np.mean,
        permutation_type="samples",
        n_resamples=resamples,
        vectorized=True,
        rng=np.random.default_rng(seed),
    )
    return float(result.pvalue)


@SETTINGS
@given(paired_scores(min_n=2, max_n=12))
@example(  # differences that sum to 0 exactly, but not in floating point
    (np.array([0.7, 0.1, 0.2, 0.2, 0.2, 0.8, 0.9]), np.array([0.8, 0, 0.2, 0.3, 0, 1, 0.8]))
)
def test_exact_randomization_matches_scipy_permutation_test(
    data: tuple[NDArray[np.float64], NDArray[np.float64]],
) -> None:
    a, b = data
    d = a - b
    ours = randomization_test(a, b)
    assert ours.exact
    if abs(d.sum()) <= 100 * np.finfo(np.float64).eps * (np.abs(a) + np.abs(b)).sum():
        # T = 0 in exact arithmetic (e.g. d = [.1, -.1, .2, -.2]): every flip is as extreme,
        # p = 1; scipy sees the rounding residue of the sum and answers below 1
        assert ours.p_value == 1.0
        return
    reference = _scipy_sign_flip_p(d, np.inf)
    # scipy doubles the smaller one-sided p; for the symmetric sign-flip distribution this is
    # the two-sided count, except when T = 0 in theory (scipy then exceeds 1 and clips to 1).
    assert ours.p_value == pytest.approx(reference, abs=1e-12)


@SETTINGS
@given(paired_scores(min_n=40, max_n=80))
def test_random_sign_flips_agree_with_scipy_within_sampling_error(
    data: tuple[NDArray[np.float64], NDArray[np.float64]],
) -> None:
    a, b = data
    d = a - b
    ours = randomization_test(a, b, resamples=4000, seed=3)
    assert not ours.exact and ours.resamples == 4000
    reference = _scipy_sign_flip_p(d, 4000, seed=11)
    # ours counts |T*| >= |T| (sd of p: sqrt(p(1-p)/B)); scipy doubles a one-sided share q =
    # p/2 (sd: 2 sqrt(q(1-q)/B))
    p = max(min(ours.p_value, 1 - 1e-3), 1e-3)
    q = p / 2
    sampling_sd = math.sqrt(p * (1 - p) / 4000 + 4 * q * (1 - q) / 4000)
    assert abs(ours.p_value - reference) <= 5 * sampling_sd + 2 / 4000


def test_random_draws_agree_with_full_enumeration() -> None:
    rng = np.random.default_rng(7)
    a = rng.random(18)
    b = np.clip(a - 0.08 + rng.normal(0, 0.15, 18), 0, 1)
    exact = randomization_test(a, b).p_value
    drawn = randomization_test(a, b, exact=False, resamples=20_000, seed=1).p_value
    assert abs(drawn - exact) < 5 * math.sqrt(exact * (1 - exact) / 20_000)


def test_random_draws_count_the_observed_data_as_a_draw() -> None:
    # Only the all-plus and all-minus sign vectors reach |T| of a constant shift over 40
    # queries: a draw hits one with probability 2/2^40, so k = 0 and p = 1/(B + 1), never 0
    a = np.linspace(0.3, 0.9, 40)
    for resamples in (99, 999):
        result = randomization_test(a, a - 0.25, exact=False, resamples=resamples, seed=1)
        assert result.p_value == 1 / (resamples + 1)
    # and in general p = (k + 1)/(B + 1), k the draws with |T*| >= |T| - gamma
    rng = np.random.default_rng(6)
    x, y = rng.random(35), rng.random(35)
    d, tolerance = differences(x, y)
    k = _resample.sign_flip_counts(
        d[:, None], np.asarray([abs(d.sum()) - tolerance]), 2000, seed=5
    )[0]
    assert 0 < k < 2000
    p = randomization_test(x, y, exact=False, resamples=2000, seed=5).p_value
    assert p == (k + 1) / 2001


def _exact_sign_flip_p(a: Sequence[float], b: Sequence[float]) -> Fraction:
    """The randomization p by enumerating all 2^n sign vectors in exact arithmetic."""
    d = _exact_differences_of(a, b)
    observed = abs(sum(d, Fraction(0)))
    hits = sum(
        1
        for signs in product((1, -1), repeat=len(d))
        if abs(sum((s * v for s, v in zip(signs, d, strict=True)), Fraction(0))) >= observed
    )
    return Fraction(hits, 2 ** len(d))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([0.5, 0.3, 0.8, 0.6, 0.9, 0.2], [0.2, 0.3, 0.4, 0.7, 0.5, 0.1]),
        ([0.3, 0.1, 0.5, 0.7, 0.2, 0.4, 0.6], [0.2, 0.0, 0.4, 0.6, 0.1, 0.5, 0.4]),
    ],
)
def test_exact_randomization_against_every_sign_flip_in_exact_arithmetic(
    a: list[float], b: list[float]
) -> None:
    reference = _exact_sign_flip_p(a, b)
    result = randomization_test(a, b)
    assert result.exact and result.p_value == float(reference)
    # the same 2^n vectors drawn at random many times: p close to the exact share
    drawn = randomization_test(a, b, exact=False, resamples=20_000, seed=2).p_value
    ideal = float(reference)
    assert abs(drawn - ideal) <= 5 * math.sqrt(ideal * (1 - ideal) / 20_000) + 1 / 20_001


def test_exact_enumeration_beyond_the_automatic_limit_and_its_cap() -> None:
    rng = np.random.default_rng(2)
    a, b = rng.random(34), rng.random(34)
    assert not randomization_test(a, b).exact  # n > 30: random draws by default
    forced = randomization_test(a, b, exact=True)
    assert forced.exact and 0 < forced.p_value <= 1
    drawn = randomization_test(a, b, resamples=20_000)
    assert abs(drawn.p_value - forced.p_value) < 0.02
    with pytest.raises(InputError, match="too large"):
        randomization_test(rng.random(41), rng.random(41), exact=True)


def test_same_seed_same_p_and_chunking_does_not_matter(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    a = np.round(rng.random(300), 1)  # grid values: many sums tie with |T|
    b = np.round(np.clip(a + rng.normal(0.02, 0.2, 300), 0, 1), 1)
    first = randomization_test(a, b, seed=42).p_value
    assert randomization_test(a, b, seed=42).p_value == first
    assert randomization_test(a, b, seed=43).p_value != first
    monkeypatch.setattr(_resample, "_CHUNK_ELEMENTS", 1000)  # 3 draws per chunk
    assert randomization_test(a, b, seed=42).p_value == first
    boot = bootstrap_test(a, b, seed=42, resamples=2000)
    monkeypatch.setattr(_resample, "_CHUNK_ELEMENTS", 1 << 20)
    again = bootstrap_test(a, b, seed=42, resamples=2000)
    assert again.p_value == boot.p_value  # the same resamples; sums may differ in the last bit
    assert again.interval.low == pytest.approx(boot.interval.low, rel=1e-12)
    assert again.interval.high == pytest.approx(boot.interval.high, rel=1e-12)


_THREADS_SCRIPT = """
import numpy as np
from rankscope.stats import bootstrap_test, randomization_test, randomized_tukey_hsd
rng = np.random.default_rng(9)
x = np.round(rng.random((6, 700)), 1)
p = [randomization_test(x[0], x[i], seed=4).p_value for i in range(1, 6)]
r = randomized_tukey_hsd(x, resamples=2000, seed=4).p_matrix().ravel().tolist()
b = bootstrap_test(x[0], x[1], seed=4, resamples=2000)
print(repr(p + r + [b.p_value, b.interval.low, b.interval.high]))
"""


def test_same_p_on_any_thread_count() -> None:
    outputs = set()
    for threads in ("1", "2", "4"):
        env = dict(os.environ)
        env.update(OPENBLAS_NUM_THREADS=threads, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
        env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2] / "src")
        done = subprocess.run(
            [sys.executable, "-c", _THREADS_SCRIPT],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1


def test_a_pair_gets_the_same_p_alone_or_among_many_systems() -> None:
    rng = np.random.default_rng(4)
    x = rng.random((5, 200))
    x[3] += 0.03
    alone = randomization_test(x[0], x[3], seed=8).p_value
    many = pairwise(x, test="randomization", correction="none", seed=8)
    assert many.pair(0, 3).p_value == alone
    d = (x[1:] - x[0]).T
    vectorised, _ = randomization_pvalues(d, seed=8)
    assert vectorised[2] == alone


# ----------------------------------------------------------------------------- bootstrap
@settings(max_examples=15, deadline=None)
@given(paired_scores(min_n=15, max_n=60, grid=False))
def test_bootstrap_test_matches_a_scipy_bootstrap_of_the_studentized_statistic(
    data: tuple[NDArray[np.float64], NDArray[np.float64]],
) -> None:
    a, b = data
    d = a - b
    n = d.size
    ours = bootstrap_test(a, b, resamples=3000, seed=1)

    def t_stat(z: NDArray[np.float64], axis: int = -1) -> NDArray[np.float64]:
        return np.asarray(z.mean(axis=axis) / (z.std(ddof=1, axis=axis) / math.sqrt(n)))

    shifted = d - d.mean()
    ref = stats.bootstrap(
        (shifted,), t_stat, n_resamples=3000, method="percentile", rng=np.random.default_rng(2)
    )
    t_obs = d.mean() / (d.std(ddof=1) / math.sqrt(n))
    k = np.count_nonzero(np.abs(ref.bootstrap_distribution) >= abs(t_obs))
    reference = (k + 1) / 3001
    p = min(max(reference, 0.01), 0.99)
    assert abs(ours.p_value - reference) <= 5 * math.sqrt(2 * p * (1 - p) / 3000) + 2 / 3000


def test_bootstrap_p_values_and_intervals_are_pinned() -> None:
    # the values of the two-pass kernel before the bootstrap was vectorised (same seed, same
    # draws): the resampled means are the same sums, the variances within a few eps
    rng = np.random.default_rng(2024)
    a = np.round(rng.random(2000), 1)
    b = np.round(np.clip(a + rng.normal(0.01, 0.2, 2000), 0, 1), 1)
    big = bootstrap_test(a, b, resamples=3000, seed=7)
    assert big.p_value == 63 / 3001
    assert (big.interval.low, big.interval.high) == (-0.01651994336122232, -0.0015000000000000048)
    # five queries on a grid: many resamples draw one value (their variance is summed again)
    small = bootstrap_test(
        [0.1, 0.4, 0.2, 0.4, 0.3], [0.0, 0.4, 0.2, 0.1, 0.3], resamples=999, seed=3
    )
    assert small.p_value == 247 / 1000
    assert (small.interval.low, small.interval.high) == (0.0, 0.26)


def test_bootstrap_test_interval_is_bca_or_percentile() -> None:
    rng = np.random.default_rng(12)
    a = rng.random(50)
    b = np.clip(a - 0.05 + rng.normal(0, 0.1, 50), 0, 1)
    bca = bootstrap_test(a, b, seed=3, resamples=4000)
    pct = bootstrap_test(a, b, seed=3, resamples=4000, interval="percentile")
    assert bca.interval.method == "bca" and pct.interval.method == "percentile"
    assert bca.p_value == pct.p_value
    t = paired_t(a, b).interval
    assert bca.interval.low == pytest.approx(t.low, abs=0.01)
    assert bca.interval.high == pytest.approx(t.high, abs=0.01)


# ----------------------------------------------------------------------------- wilcoxon, sign
def _exact_differences(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """``a - b`` as exact arithmetic has it, for scores on a 0.1 grid (differences of whole
    tenths, each rounded once: equal differences are equal floats); ``a - b`` otherwise."""
    tenths_a, tenths_b = np.round(a * 10), np.round(b * 10)
    if np.allclose(a * 10, tenths_a, rtol=0, atol=1e-9) and np.allclose(
        b * 10, tenths_b, rtol=0, atol=1e-9
    ):
        return (tenths_a - tenths_b) / 10
    return a - b


@SETTINGS
@given(paired_scores(), st.sampled_from(["wilcox", "pratt", "zsplit"]))
def test_wilcoxon_matches_scipy(
    data: tuple[NDArray[np.float64], NDArray[np.float64]], zero_method: str
) -> None:
    a, b = data
    d = _exact_differences(a, b)
    ours = wilcoxon_test(a, b, zero_method=zero_method)  # type: ignore[arg-type]
    if not d.any() or (zero_method == "pratt" and np.count_nonzero(d) == 0):
        assert ours.p_value == 1.0
        return
    with np.errstate(all="ignore"):
        ref = stats.wilcoxon(d, zero_method=zero_method, correction=True)
        uncorrected = stats.wilcoxon(d, zero_method=zero_method)
    if math.isnan(float(ref.pvalue)):
        assert ours.p_value == 1.0
    else:
        assert ours.p_value == pytest.approx(float(ref.pvalue), rel=1e-12)
        assert ours.statistic == pytest.approx(float(ref.statistic))
        plain = wilcoxon_test(a, b, zero_method=zero_method, correction=False)  # type: ignore[arg-type]
        assert plain.p_value == pytest.approx(float(uncorrected.pvalue), rel=1e-12)


def test_wilcoxon_zero_differences() -> None:
    a = np.array([0.5, 0.4, 0.3, 0.9, 0.7, 0.6, 0.2, 0.8])
    b = np.array([0.5, 0.4, 0.1, 0.5, 0.4, 0.2, 0.1, 0.9])  # two zero differences
    d = np.array([0, 0, 2, 4, 3, 4, 1, -1]) / 10  # exactly: 0.9 - 0.5 and 0.6 - 0.2 are tied
    dropped = wilcoxon_test(a, b)
    assert dropped.p_value == pytest.approx(float(stats.wilcoxon(d).pvalue))
    pratt = wilcoxon_test(a, b, zero_method="pratt")
    assert pratt.p_value == pytest.approx(float(stats.wilcoxon(d, zero_method="pratt").pvalue))
    assert pratt.statistic != dropped.statistic  # zeros ranked (pratt) or removed (wilcox)
    assert dropped.exact  # n <= 13: scipy enumerates the signs


@SETTINGS
@given(paired_scores())
def test_sign_test_matches_binomtest(data: tuple[NDArray[np.float64], NDArray[np.float64]]) -> None:
    a, b = data
    ours = sign_test(a, b)
    w = wins_ties_losses(a, b)
    assert (ours.wins, ours.ties, ours.losses) == (w.wins, w.ties, w.losses)
    if w.wins + w.losses == 0:
        assert ours.p_value == 1.0
    else:
        ref = stats.binomtest(w.wins, w.wins + w.losses, 0.5).pvalue
        assert ours.p_value == pytest.approx(float(ref), rel=1e-12)


# ----------------------------------------------------------------------------- degenerate input
def _every_test(
    a: NDArray[np.float64], b: NDArray[np.float64], *, bootstrap: bool = True
) -> list[PairedTest]:
    return [
        paired_t(a, b),
        randomization_test(a, b),
        randomization_test(a, b, exact=False, resamples=500),
        *([bootstrap_test(a, b, resamples=500)] if bootstrap else []),
        wilcoxon_test(a, b),
        wilcoxon_test(a, b, zero_method="zsplit"),
        sign_test(a, b),
    ]


@pytest.mark.parametrize("n", [2, 7, 60])
def test_identical_runs_give_p_one_and_no_nan(n: int) -> None:
    a = np.round(np.random.default_rng(n).random(n), 2)
    tests = _every_test(a, a.copy()) if n > 2 else _every_test(a, a.copy(), bootstrap=False)
    for result in tests:
        assert result.p_value == 1.0, result
        assert result.effect_size == 0.0 and result.delta == 0.0
        assert (result.interval.low, result.interval.high) == (0.0, 0.0)
        assert not math.isnan(result.statistic)


def test_a_constant_difference_has_zero_variance() -> None:
    a = np.array([0.3, 0.5, 0.7, 0.2, 0.9, 0.4])
    b = a - 0.1  # d = 0.1 everywhere, up to rounding
    t = paired_t(a, b)
    assert math.isinf(t.statistic) and t.statistic > 0 and t.p_value == 0.0
    assert math.isinf(t.effect_size)
    assert t.interval.low == t.interval.high == pytest.approx(0.1)
    r = randomization_test(a, b)
    assert r.p_value == pytest.approx(2 / 2**6)  # only all-plus and all-minus reach |T|
    boot = bootstrap_test(a, b, resamples=999)
    assert boot.p_value == pytest.approx(1 / 1000)
    assert sign_test(a, b).p_value == pytest.approx(2 / 2**6)


@pytest.mark.parametrize("scale", [1e-163, 1e-300])
def test_paired_t_on_differences_near_underflow_is_the_scaled_test(scale: float) -> None:
    # the squared deviations of differences of 1e-163 underflowed to 0: sd 0, t = inf, p = 0
    a, b = np.array([0.0, 1.0, 3.0, 2.0]), np.array([1.0, 1.0, 1.0, 1.0])
    plain, tiny = paired_t(a, b), paired_t(a * scale, b * scale)
    assert plain.p_value == pytest.approx(float(stats.ttest_rel(a, b).pvalue), rel=1e-12)
    assert tiny.statistic == pytest.approx(plain.statistic, rel=1e-12)
    assert tiny.p_value == pytest.approx(plain.p_value, rel=1e-12)
    assert tiny.effect_size == pytest.approx(plain.effect_size, rel=1e-12)


def test_bad_input_is_refused() -> None:
    with pytest.raises(InputError, match="same queries"):
        paired_t([0.1, 0.2, 0.3], [0.1, 0.2])
    with pytest.raises(InputError, match="at least 2 queries"):
        paired_t([0.1], [0.2])
    with pytest.raises(InputError, match="NaN"):
        paired_t([0.1, float("nan"), 0.3], [0.1, 0.2, 0.3])
    with pytest.raises(InputError, match="seed"):
        randomization_test([0.1] * 40, [0.2] * 40, seed=-1)
    with pytest.raises(InputError, match="resamples"):
        randomization_test([0.1] * 40, [0.2] * 40, resamples=0)
    with pytest.raises(InputError, match="zero_method"):
        wilcoxon_test([0.1, 0.3], [0.2, 0.1], zero_method="drop")  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- rounding
# Scores equal in exact arithmetic can differ in their last bits (0.1 + 0.2 vs 0.3; the P@10
# differences 0.3 - 0.2 = 0.09999999999999998 and 0.1 - 0 = 0.1). The references below work in
# exact rational arithmetic on the decimals as written.
def _exact(values: Sequence[float]) -> list[Fraction]:
    return [Fraction(str(v)) for v in values]


def _exact_differences_of(a: Sequence[float], b: Sequence[float]) -> list[Fraction]:
    return [x - y for x, y in zip(_exact(a), _exact(b), strict=True)]


def _mid_ranks(values: Sequence[Fraction]) -> list[Fraction]:
    ordered = sorted(values)
    first = {v: ordered.index(v) for v in set(values)}
    count = {v: ordered.count(v) for v in set(values)}
    return [Fraction(2 * first[v] + count[v] + 1, 2) for v in values]


def _exact_signed_rank(a: Sequence[float], b: Sequence[float]) -> tuple[Fraction, Fraction]:
    """W and the two-sided p of the signed-rank test by enumerating all 2^n signs (zeros
    dropped, mid-ranks for tied |d|, exact arithmetic)."""
    d = [v for v in _exact_differences_of(a, b) if v != 0]
    ranks = _mid_ranks([abs(v) for v in d])
    r_plus = sum((r for r, v in zip(ranks, d, strict=True) if v > 0), Fraction(0))
    r_minus = sum(ranks, Fraction(0)) - r_plus
    below = above = 0
    for signs in product((0, 1), repeat=len(d)):
        drawn = sum((r for r, s in zip(ranks, signs, strict=True) if s), Fraction(0))
        below += drawn <= r_plus
        above += drawn >= r_plus
    p = min(Fraction(1), 2 * Fraction(min(below, above), 2 ** len(d)))
    return min(r_plus, r_minus), p


def _r_wilcox_asymptotic(a: Sequence[float], b: Sequence[float]) -> float:
    """R's ``wilcox.test(a, b, paired = TRUE, exact = FALSE, correct = TRUE)``
    (stats:::.wilcox_test_one_stat_asymp and .wilcox_test_one_pval_asymp, two-sided) on the
    exact differences."""
    d = [v for v in _exact_differences_of(a, b) if v != 0]
    n = len(d)
    ranks = _mid_ranks([abs(v) for v in d])
    statistic = float(sum((r for r, v in zip(ranks, d, strict=True) if v > 0), Fraction(0)))
    ties = [ranks.count(r) for r in set(ranks)]
    sigma = math.sqrt(n * (n + 1) * (2 * n + 1) / 24 - sum(t**3 - t for t in ties) / 48)
    z = statistic - n * (n + 1) / 4
    z = (z - math.copysign(0.5, z) if z else z) / sigma
    return float(2 * min(stats.norm.cdf(z), stats.norm.sf(z)))


def test_wilcoxon_ranks_differences_equal_up_to_rounding_as_ties() -> None:
    a = [0.3, 0.1, 0.5, 0.7, 0.2, 0.4]
    b = [0.2, 0.0, 0.4, 0.6, 0.1, 0.5]  # every |d| is 0.1: six tied ranks of 3.5
    w, p = _exact_signed_rank(a, b)
    assert (w, p) == (Fraction(7, 2), Fraction(7, 32))
    ours = wilcoxon_test(a, b)
    assert ours.statistic == 3.5 and ours.p_value == 0.21875  # was 2.5 and 0.15625
    assert ours.exact


def test_wilcoxon_uses_the_normal_approximation_when_ties_exist_in_exact_arithmetic() -> None:
    # n = 14 with one tie (0.1 - 0 and 0.4 - 0.3, distinct floats): scipy's automatic method
    # chose the exact untied distribution from the floats; with the tie, n > 13 takes the
    # normal approximation with tie and continuity corrections, as R's wilcox.test
    a = [0.1, 0.4, 0.21, 0.0, 0.43, 0.54, 0.0, 0.76, 0.87, 0.98, 0.0, 0.25, 0.36, 0.47]
    b = [0.0, 0.3, 0.0, 0.32, 0.0, 0.0, 0.65, 0.0, 0.0, 0.0, 0.19, 0.0, 0.0, 0.0]
    assert len({abs(x - y) for x, y in zip(a, b, strict=True)}) == 14  # distinct as floats
    ours = wilcoxon_test(a, b)
    assert not ours.exact
    assert ours.p_value == pytest.approx(_r_wilcox_asymptotic(a, b), rel=1e-12)
    plain = wilcoxon_test(a, b, correction=False)  # scipy's default: no continuity correction
    exact_d = np.asarray([float(v) for v in _exact_differences_of(a, b)])
    assert plain.p_value == pytest.approx(float(stats.wilcoxon(exact_d).pvalue), rel=1e-12)
    assert plain.p_value < ours.p_value


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(14, 60))
def test_wilcoxon_normal_approximation_is_r_wilcox_test_with_continuity_correction(
    seed: int, n: int
) -> None:
    rng = np.random.default_rng(seed)
    a = np.round(rng.random(n), 1)
    b = np.round(np.clip(a + rng.normal(0.05, 0.2, n), 0, 1), 1)
    d = _exact_differences_of(a.tolist(), b.tolist())
    if sum(1 for v in d if v != 0) < 2:
        return
    ours = wilcoxon_test(a, b)
    if ours.exact:  # n <= 50 with neither zeros nor ties: psignrank, R's exact = TRUE
        return
    assert ours.p_value == pytest.approx(_r_wilcox_asymptotic(a.tolist(), b.tolist()), rel=1e-9)


def _equal_in_exact_arithmetic() -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    a = np.array([0.1 + 0.2, 0.4 + 0.2, 0.7 + 0.1, 0.1 + 0.7, 0.3 + 0.6, 0.2 + 0.1] * 2)
    b = np.array([0.3, 0.6, 0.8, 0.8, 0.9, 0.3] * 2)
    assert (a != b).all()  # the floats differ on every query
    return a, b


@pytest.mark.parametrize("uniform", [False, True])
def test_systems_equal_in_exact_arithmetic_are_not_different(uniform: bool) -> None:
    # uniform: 0.1 + 0.2 against 0.3 on every query, where the floats alone gave t = inf,
    # p = 0, and a sign test p of 2/2^12
    a, b = (np.full(12, 0.1 + 0.2), np.full(12, 0.3)) if uniform else _equal_in_exact_arithmetic()
    assert wins_ties_losses(a, b) == WinsTiesLosses(0, 12, 0)
    for result in _every_test(a, b):
        assert result.p_value == 1.0, result  # t was inf with p 0, the sign test 0.0005
        assert result.delta == 0.0 and result.effect_size == 0.0
        assert (result.wins, result.ties, result.losses) == (0, 12, 0)
        assert (result.interval.low, result.interval.high) == (0.0, 0.0)


def test_sign_test_counts_ties_up_to_rounding() -> None:
    a, b = _equal_in_exact_arithmetic()
    a = np.concatenate([a, [0.9, 0.8, 0.7]])
    b = np.concatenate([b, [0.2, 0.1, 0.4]])
    result = sign_test(a, b)
    assert (result.wins, result.ties, result.losses) == (3, 12, 0)
    assert result.p_value == 0.25  # Binomial(3, 1/2): 2 * 1/8


def test_a_mean_difference_of_zero_in_exact_arithmetic_gives_p_one() -> None:
    a = [0.2, 0.5, 0.5, 0.5, 0.1]
    b = [0.6, 0.5, 0.3, 0.3, 0.1]  # d = -0.4, 0, 0.2, 0.2, 0: mean 0 exactly, 1e-17 in floats
    assert sum(_exact_differences_of(a, b)) == 0
    for result in (paired_t(a, b), randomization_test(a, b), bootstrap_test(a, b, seed=3)):
        assert result.delta == 0.0 and result.statistic == 0.0 and result.p_value == 1.0
    # the bootstrap test gave 0.832


# ----------------------------------------------------------------------------- bootstrap
def _ideal_bootstrap_p(a: Sequence[float], b: Sequence[float]) -> Fraction:
    """The studentized bootstrap p with every one of the n^n resamples (B -> infinity), in
    exact arithmetic: the share of resamples of the shifted differences with |t*| >= |t|
    (t* = 0 for a constant resample)."""
    d = _exact_differences_of(a, b)
    n = len(d)

    def t_squared(values: Sequence[Fraction]) -> Fraction | None:
        mean = sum(values, Fraction(0)) / n
        spread = sum(((v - mean) ** 2 for v in values), Fraction(0))
        if spread == 0:
            return None if mean != 0 else Fraction(0)
        return n * (n - 1) * mean * mean / spread

    observed = t_squared(d)
    assert observed is not None
    shift = sum(d, Fraction(0)) / n
    z = [v - shift for v in d]
    hits = 0
    for picks in combinations_with_replacement(range(n), n):
        weight = math.factorial(n)
        for count in Counter(picks).values():
            weight //= math.factorial(count)
        drawn = t_squared([z[i] for i in picks])
        if (Fraction(0) if drawn is None else drawn) >= observed:
            hits += weight
    return Fraction(hits, n**n)


def test_a_constant_resample_has_no_variance_and_t_star_zero() -> None:
    a = [0.3, 0.2, 0.3, 0.3, 0.2]
    b = [0.3, 0.5, 0.3, 0.6, 0.5]
    # 8.8% of the resamples draw one value only; E[y²] - E[y]² left about 1e-18 of variance in
    # some, and their t* of 1e8 counted as extreme (p was 0.0305)
    assert _ideal_bootstrap_p(a, b) == 0
    assert bootstrap_test(a, b, seed=3).p_value == 1 / 10_001


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_bootstrap_p_agrees_with_every_resample_enumerated(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = np.round(rng.random(6), 1).tolist()
    b = np.round(np.clip(np.asarray(a) + rng.normal(0.1, 0.25, 6), 0, 1), 1).tolist()
    ideal = float(_ideal_bootstrap_p(a, b))
    resamples = 20_000
    ours = bootstrap_test(a, b, seed=seed, resamples=resamples).p_value
    # p = (k + 1)/(B + 1) with k ~ Binomial(B, ideal): 5 standard errors, plus the + 1
    bound = 5 * math.sqrt(max(ideal * (1 - ideal), 1e-4) / resamples) + 1 / (resamples + 1)
    assert abs(ours - ideal) <= bound, (a, b, ideal, ours)


def test_bootstrap_test_refuses_two_queries_and_warns_below_five() -> None:
    with pytest.raises(InputError, match="at least 3 queries"):
        bootstrap_test([0.5, 0.3], [0.2, 0.4])  # p was 1/(B + 1) whatever the data
    with pytest.warns(StatsWarning, match="unreliable below 5"):
        bootstrap_test([0.5, 0.3, 0.4], [0.2, 0.4, 0.1], resamples=99)


def test_equal_up_to_rounding_is_the_tie_rule_of_w_t_l() -> None:
    from rankscope.stats import equal_up_to_rounding

    assert equal_up_to_rounding(0.1 + 0.2, 0.3)
    assert equal_up_to_rounding(0.3 - 0.2, 0.1)
    assert not equal_up_to_rounding(0.3, 0.3 + 1e-12)
    assert equal_up_to_rounding(0.0, 0.0) and not equal_up_to_rounding(0.0, 1e-300)
