"""Paired tests against scipy.stats on generated data, degenerate inputs, determinism."""

from __future__ import annotations

import math
import os
import subprocess
import sys
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
    _resample,
    bootstrap_test,
    paired_t,
    randomization_test,
    sign_test,
    wilcoxon_test,
    wins_ties_losses,
)
from rankscope.stats.compare import pairwise
from rankscope.stats.paired import randomization_pvalues

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
    if abs(d.sum()) <= 100 * np.finfo(np.float64).eps * np.abs(d).sum():
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
@SETTINGS
@given(paired_scores(), st.sampled_from(["wilcox", "pratt", "zsplit"]))
def test_wilcoxon_matches_scipy(
    data: tuple[NDArray[np.float64], NDArray[np.float64]], zero_method: str
) -> None:
    a, b = data
    d = a - b
    ours = wilcoxon_test(a, b, zero_method=zero_method)  # type: ignore[arg-type]
    if not d.any() or (zero_method == "pratt" and np.count_nonzero(d) == 0):
        assert ours.p_value == 1.0
        return
    with np.errstate(all="ignore"):
        ref = stats.wilcoxon(d, zero_method=zero_method)
    if math.isnan(float(ref.pvalue)):
        assert ours.p_value == 1.0
    else:
        assert ours.p_value == pytest.approx(float(ref.pvalue), rel=1e-12)
        assert ours.statistic == pytest.approx(float(ref.statistic))


def test_wilcoxon_zero_differences() -> None:
    a = np.array([0.5, 0.4, 0.3, 0.9, 0.7, 0.6, 0.2, 0.8])
    b = np.array([0.5, 0.4, 0.1, 0.5, 0.4, 0.2, 0.1, 0.9])  # two zero differences
    dropped = wilcoxon_test(a, b)
    assert dropped.p_value == pytest.approx(float(stats.wilcoxon(a - b).pvalue))
    pratt = wilcoxon_test(a, b, zero_method="pratt")
    assert pratt.p_value == pytest.approx(float(stats.wilcoxon(a - b, zero_method="pratt").pvalue))
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
def _every_test(a: NDArray[np.float64], b: NDArray[np.float64]) -> list[PairedTest]:
    return [
        paired_t(a, b),
        randomization_test(a, b),
        randomization_test(a, b, exact=False, resamples=500),
        bootstrap_test(a, b, resamples=500),
        wilcoxon_test(a, b),
        wilcoxon_test(a, b, zero_method="zsplit"),
        sign_test(a, b),
    ]


@pytest.mark.parametrize("n", [2, 7, 60])
def test_identical_runs_give_p_one_and_no_nan(n: int) -> None:
    a = np.round(np.random.default_rng(n).random(n), 2)
    for result in _every_test(a, a.copy()):
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
