"""Two systems on the same queries: paired tests, wins/ties/losses.

Every function takes two per-query vectors ``a`` and ``b`` (same queries, same order) and works
on the differences ``d = a - b``; ``delta`` is ``mean(d)``, positive when ``a`` scores higher.
All tests are two-sided. The effect size is Sakai's ``ES = mean(d) / sd(d)`` (sd with n - 1).
The interval is the paired t interval of ``mean(d)``, except for the bootstrap test, which
reports its own bootstrap interval.

Scores equal in exact arithmetic can differ in their last bits (0.1 + 0.2 and 0.3), so every
decision about a difference or a tie uses one rounding tolerance, ``100 eps`` times the size of
the scores involved (:func:`rankscope.stats._checks.clean_differences`): a per-query difference
within it is a tie (0), differences within it of each other are tied (mid-ranks), and a mean
difference whose sum is within it is 0.

Identical systems (every ``d`` is 0 up to rounding) give ``p = 1``, ``ES = 0`` and the interval
``[0, 0]`` for every test; so does a mean difference of 0 for the t, randomization and bootstrap
tests. A difference that is the same non-zero value on every query has zero variance: the t
statistic and ES are infinite and ``p = 0`` for the t test (the randomization, bootstrap,
Wilcoxon and sign tests still give their finite p-values).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from rankscope.errors import InputError
from rankscope.stats._checks import (
    TOLERANCE,
    StatsWarning,
    check_resamples,
    clean_differences,
    paired,
    safe_ratio,
    sd,
    two_sided_t_p,
    zero_sum,
)
from rankscope.stats._resample import (
    bootstrap_moments,
    exact_sign_flip_count,
    sign_flip_counts,
)
from rankscope.stats.intervals import (
    BootstrapMethod,
    Interval,
    interval_from_bootstrap,
    t_interval_from_summary,
)

ZeroMethod = Literal["wilcox", "pratt", "zsplit"]

#: Randomization tests enumerate all 2**n sign vectors up to this many queries (automatic mode).
EXACT_MAX_QUERIES = 30
_EXACT_LIMIT = 40
#: The bootstrap test refuses fewer queries: with 2, every resample is constant or has mean 0,
#: so no t* ever reaches a non-zero t and every p would be 1/(B + 1).
MIN_BOOTSTRAP_QUERIES = 3
#: ... and warns below this many.
WARN_BOOTSTRAP_QUERIES = 5


@dataclass(frozen=True, slots=True)
class WinsTiesLosses:
    """Queries where ``a`` scores higher (wins), equal up to rounding (ties) or lower (losses)
    than ``b``."""

    wins: int
    ties: int
    losses: int


@dataclass(frozen=True, slots=True)
class PairedTest:
    """The result of one paired test of ``a`` against ``b``.

    - ``delta``: ``mean(a - b)``; ``interval``: its confidence interval.
    - ``statistic``: t (``t``, ``bootstrap``), ``sum(d)`` (``randomization``), Wilcoxon's W
      (the smaller signed-rank sum) or the number of wins (``sign``).
    - ``p_value``: two-sided, uncorrected.
    - ``effect_size``: ``mean(d) / sd(d)``.
    - ``resamples``: draws used (None for analytic or exact tests); ``exact``: whether the p-value
      is exact (full enumeration or an exact distribution).
    """

    test: str
    n: int
    delta: float
    statistic: float
    p_value: float
    effect_size: float
    interval: Interval
    wins: int
    ties: int
    losses: int
    resamples: int | None = None
    exact: bool = False


def wins_ties_losses(a: Any, b: Any) -> WinsTiesLosses:
    """Count queries where ``a > b``, ``a == b`` and ``a < b``; scores equal up to rounding
    (within ``100 eps`` of their size, e.g. 0.1 + 0.2 and 0.3) are a tie."""
    d, _ = differences(a, b)
    return _wtl(d)


def differences(a: Any, b: Any) -> tuple[NDArray[np.float64], float]:
    """``a - b`` per query without rounding noise, and the rounding tolerance of its sum
    (:func:`rankscope.stats._checks.clean_differences`)."""
    x, y = paired(a, b)
    d, tolerance = clean_differences(x, y)
    return d, float(tolerance)


def _wtl(d: NDArray[np.float64]) -> WinsTiesLosses:
    return WinsTiesLosses(
        int(np.count_nonzero(d > 0)), int(np.count_nonzero(d == 0)), int(np.count_nonzero(d < 0))
    )


def sum_difference(d: NDArray[np.float64], tolerance: float) -> float:
    """``sum(d)``, exactly 0 when it is 0 up to rounding (``tolerance``)."""
    total = float(d.sum())
    return 0.0 if zero_sum(total, tolerance) else total


def mean_difference(d: NDArray[np.float64], tolerance: float) -> float:
    """``mean(d)``, exactly 0 when the sum is 0 up to rounding (``tolerance``)."""
    total = float(d.sum())
    return 0.0 if zero_sum(total, tolerance) else float(d.mean())


def difference_interval(d: NDArray[np.float64], tolerance: float, level: float) -> Interval:
    """The paired t interval of the mean difference (centred on :func:`mean_difference`)."""
    return t_interval_from_summary(int(d.size), mean_difference(d, tolerance), sd(d), level)


def from_differences(
    test: str,
    d: NDArray[np.float64],
    tolerance: float,
    statistic: float,
    p: float,
    interval: Interval,
    resamples: int | None = None,
    exact: bool = False,
) -> PairedTest:
    w = _wtl(d)
    delta = mean_difference(d, tolerance)
    return PairedTest(
        test=test,
        n=int(d.size),
        delta=delta,
        statistic=float(statistic),
        p_value=float(min(1.0, max(0.0, p))),
        effect_size=safe_ratio(delta, sd(d)),
        interval=interval,
        wins=w.wins,
        ties=w.ties,
        losses=w.losses,
        resamples=resamples,
        exact=exact,
    )


def t_statistic(d: NDArray[np.float64], tolerance: float) -> float:
    """``mean(d) / (sd(d) / sqrt(n))``; 0 for a mean of 0, ±inf for zero spread."""
    return safe_ratio(mean_difference(d, tolerance), sd(d) / math.sqrt(d.size))


def paired_t(a: Any, b: Any, *, level: float = 0.95) -> PairedTest:
    """Student's paired t test (two-sided, n - 1 degrees of freedom)."""
    d, tolerance = differences(a, b)
    t = t_statistic(d, tolerance)
    return from_differences(
        "t",
        d,
        tolerance,
        t,
        two_sided_t_p(t, d.size - 1),
        difference_interval(d, tolerance, level),
    )


def randomization_test(
    a: Any,
    b: Any,
    *,
    resamples: int = 10_000,
    seed: int = 0,
    exact: bool | None = None,
    level: float = 0.95,
) -> PairedTest:
    """Fisher's randomization test with sign flips, statistic ``sum(d)`` (equivalently the mean).

    Under the null hypothesis each query's two scores are exchangeable, so each difference keeps
    or flips its sign with probability 1/2. The p-value is the share of sign vectors with
    ``|T*| >= |T| - gamma``, where ``gamma = 100 * eps * sum(|a_i| + |b_i|)`` absorbs rounding
    (sums that are equal in exact arithmetic can differ in the last bits; scipy's
    ``permutation_test`` uses ``100 * eps * |T|``, which vanishes when T is 0 in theory but not
    in floating point); ``|T| <= gamma`` gives p = 1. ``exact`` None enumerates all ``2**n``
    vectors when n <= 30 (p = k / 2**n, the identity included), else draws ``resamples``
    random vectors (``p = (k + 1) / (B + 1)``).
    """
    d, tolerance = differences(a, b)
    p, exact_used = randomization_pvalues(
        d[:, None], tolerances=np.asarray([tolerance]), resamples=resamples, seed=seed, exact=exact
    )
    return from_differences(
        "randomization",
        d,
        tolerance,
        sum_difference(d, tolerance),
        float(p[0]),
        difference_interval(d, tolerance, level),
        None if exact_used else resamples,
        exact_used,
    )


def randomization_pvalues(
    differences: NDArray[np.float64],
    *,
    tolerances: NDArray[np.float64] | None = None,
    resamples: int = 10_000,
    seed: int = 0,
    exact: bool | None = None,
) -> tuple[NDArray[np.float64], bool]:
    """Randomization p-values for each column of ``differences`` (queries × pairs), all pairs
    seeing the same random sign vectors; returns the p-values and whether they are exact.
    ``tolerances``: the rounding tolerance of each column's sums (from
    :func:`~rankscope.stats._checks.clean_differences`; default ``100 eps * sum(|d|)``)."""
    n, k = differences.shape
    if exact is None:
        exact = n <= EXACT_MAX_QUERIES
    if tolerances is None:
        tolerances = TOLERANCE * np.abs(differences).sum(axis=0)
    observed = np.abs(differences.sum(axis=0))
    thresholds = observed - tolerances
    if exact:
        if n > _EXACT_LIMIT:
            raise InputError(
                f"exact enumeration of 2**{n} sign vectors is too large (at most {_EXACT_LIMIT} "
                "queries)",
                value=n,
                hint="use random draws (exact=False)",
            )
        total = float(2**n)
        counts = [exact_sign_flip_count(differences[:, j], float(thresholds[j])) for j in range(k)]
        return np.asarray(counts, dtype=np.float64) / total, True
    resamples = check_resamples(resamples)
    drawn = sign_flip_counts(differences, thresholds, resamples, seed)
    p = (drawn.astype(np.float64) + 1.0) / float(resamples + 1)
    return p, False


def bootstrap_test(
    a: Any,
    b: Any,
    *,
    resamples: int = 10_000,
    seed: int = 0,
    interval: BootstrapMethod = "bca",
    level: float = 0.95,
) -> PairedTest:
    """Paired bootstrap test with a studentized statistic (Sakai 2006).

    The differences are shifted to mean 0 (the null hypothesis), queries are resampled with
    replacement ``resamples`` times, and ``p = (k + 1) / (B + 1)`` where k counts resamples with
    ``|t*| >= |t|`` (relative tolerance 100 eps). A resample whose shifted differences are all
    equal has ``t* = 0``; a mean difference of 0 (up to rounding) has ``t = 0`` and ``p = 1``.
    The interval of ``mean(d)`` is the BCa (default) or percentile bootstrap interval from the
    same resamples, unshifted. Fewer than 3 queries are refused (with 2, no resample can reach
    a non-zero t); 3 or 4 draw a :class:`~rankscope.stats.StatsWarning` (the resamples then
    take only a handful of distinct values).
    """
    d, tolerance = differences(a, b)
    check_bootstrap_queries(d.size)
    if d.size < WARN_BOOTSTRAP_QUERIES:
        warnings.warn(
            f"the bootstrap test on {d.size} queries: its resamples take only a handful of "
            f"distinct values, so its p-value is unreliable below {WARN_BOOTSTRAP_QUERIES} "
            "queries",
            StatsWarning,
            stacklevel=2,
        )
    p, intervals = bootstrap_pvalues(
        d[:, None],
        tolerances=np.asarray([tolerance]),
        resamples=resamples,
        seed=seed,
        interval=interval,
        level=level,
    )
    return from_differences(
        "bootstrap", d, tolerance, t_statistic(d, tolerance), float(p[0]), intervals[0], resamples
    )


def check_bootstrap_queries(n: int) -> None:
    if n < MIN_BOOTSTRAP_QUERIES:
        raise InputError(
            f"the bootstrap test needs at least {MIN_BOOTSTRAP_QUERIES} queries",
            value=n,
            hint="with 2 queries every resample has t* = 0, so every p-value would be "
            "1/(B + 1); use the t, randomization or sign test, on more queries",
        )


def bootstrap_pvalues(
    differences: NDArray[np.float64],
    *,
    tolerances: NDArray[np.float64] | None = None,
    resamples: int = 10_000,
    seed: int = 0,
    interval: BootstrapMethod = "bca",
    level: float = 0.95,
) -> tuple[NDArray[np.float64], list[Interval]]:
    """Studentized paired bootstrap p-values and intervals for each column of ``differences``
    (queries × pairs); every pair sees the same resampled queries. ``tolerances`` as for
    :func:`randomization_pvalues`."""
    resamples = check_resamples(resamples)
    n, k = differences.shape
    check_bootstrap_queries(n)
    if tolerances is None:
        tolerances = TOLERANCE * np.abs(differences).sum(axis=0)
    means = np.asarray([mean_difference(differences[:, j], float(tolerances[j])) for j in range(k)])
    shifted = differences - means
    boot_means, boot_spread = bootstrap_moments(shifted, resamples, seed, variances=True)
    assert boot_spread is not None
    boot_sd = np.sqrt(boot_spread * (n / (n - 1)))
    # spread within rounding of the values' size counts as none (see _checks.sd)
    scale = np.abs(shifted).max(axis=0)
    boot_sd[boot_sd <= TOLERANCE * scale] = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        t_star = np.where(boot_sd > 0, boot_means / (boot_sd / math.sqrt(n)), 0.0)
    t_obs = np.abs(
        np.asarray([t_statistic(differences[:, j], float(tolerances[j])) for j in range(k)])
    )
    # a mean of 0 (t = 0): every resample is as extreme, p = 1
    hits = np.abs(t_star) >= t_obs * (1.0 - TOLERANCE)
    p = (hits.sum(axis=0) + 1.0) / (resamples + 1.0)
    intervals = [
        interval_from_bootstrap(
            differences[:, j], boot_means[:, j] + means[j], level, interval, estimate=means[j]
        )
        for j in range(k)
    ]
    return p, intervals


def wilcoxon_test(
    a: Any,
    b: Any,
    *,
    zero_method: ZeroMethod = "wilcox",
    correction: bool = True,
    level: float = 0.95,
) -> PairedTest:
    """Wilcoxon's signed-rank test: ``scipy.stats.wilcoxon(d, zero_method=zero_method,
    correction=correction, alternative="two-sided", method="auto")`` on the differences
    without rounding noise (ties and zeros as exact arithmetic has them).

    Zero differences: ``wilcox`` (default, as scipy and R) drops them and ranks the rest;
    ``pratt`` ranks them with the others and then drops their ranks; ``zsplit`` splits their
    ranks evenly between the positive and negative sums. Tied absolute differences get mid-ranks.
    When every difference is 0 the test is not defined; rankscope reports ``p = 1``, W = 0.
    The statistic is W, the smaller of the two signed-rank sums. The p-value is exact for
    n <= 50 without zeros or tied ``|d|``, and for any data with n <= 13 (all ``2**n`` signs
    enumerated); otherwise it comes from the normal approximation with the tie correction and,
    unless ``correction=False`` (scipy's default), the continuity correction (R's default).
    """
    from scipy import stats

    if zero_method not in ("wilcox", "pratt", "zsplit"):
        raise InputError(
            "unknown zero_method for the Wilcoxon test",
            value=zero_method,
            hint="use wilcox, pratt or zsplit",
        )
    d, tolerance = differences(a, b)
    interval = difference_interval(d, tolerance, level)
    if not d.any():
        return from_differences("wilcoxon", d, tolerance, 0.0, 1.0, interval)
    result = stats.wilcoxon(
        d,
        zero_method=zero_method,
        correction=bool(correction),
        alternative="two-sided",
        method="auto",
    )
    p = float(result.pvalue)
    if math.isnan(p):  # pragma: no cover - scipy gives NaN only when nothing is left to rank
        p = 1.0
    # scipy's "auto": the exact null distribution for n <= 50 without zeros or tied |d|; a full
    # enumeration of the 2**n signs for n <= 13 otherwise; the normal approximation (with
    # continuity and tie corrections) beyond that.
    untied = bool(d.all()) and np.unique(np.abs(d)).size == d.size
    exact = d.size <= 13 or (untied and d.size <= 50)
    return from_differences(
        "wilcoxon", d, tolerance, float(result.statistic), p, interval, exact=exact
    )


def sign_test(a: Any, b: Any, *, level: float = 0.95) -> PairedTest:
    """The sign test: wins among the queries that differ, against Binomial(wins + losses, 1/2)
    (exact two-sided ``scipy.stats.binomtest``); ties (equal up to rounding) are dropped; no
    difference gives p = 1."""
    from scipy import stats

    d, tolerance = differences(a, b)
    w = _wtl(d)
    trials = w.wins + w.losses
    p = 1.0 if trials == 0 else float(stats.binomtest(w.wins, trials, 0.5).pvalue)
    interval = difference_interval(d, tolerance, level)
    return from_differences("sign", d, tolerance, float(w.wins), p, interval, exact=True)


__all__ = [
    "EXACT_MAX_QUERIES",
    "MIN_BOOTSTRAP_QUERIES",
    "PairedTest",
    "WinsTiesLosses",
    "ZeroMethod",
    "bootstrap_pvalues",
    "bootstrap_test",
    "check_bootstrap_queries",
    "difference_interval",
    "differences",
    "mean_difference",
    "paired_t",
    "randomization_pvalues",
    "randomization_test",
    "sign_test",
    "sum_difference",
    "t_statistic",
    "wilcoxon_test",
    "wins_ties_losses",
]
