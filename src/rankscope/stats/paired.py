"""Two systems on the same queries: paired tests, wins/ties/losses.

Every function takes two per-query vectors ``a`` and ``b`` (same queries, same order) and works
on the differences ``d = a - b``; ``delta`` is ``mean(d)``, positive when ``a`` scores higher.
All tests are two-sided. The effect size is Sakai's ``ES = mean(d) / sd(d)`` (sd with n - 1).
The interval is the paired t interval of ``mean(d)``, except for the bootstrap test, which
reports its own bootstrap interval.

Identical systems (every ``d`` is 0) give ``p = 1``, ``ES = 0`` and the interval ``[0, 0]`` for
every test. A difference that is the same non-zero value on every query has zero variance: the
t statistic and ES are infinite and ``p = 0`` for the t test (the randomization, bootstrap,
Wilcoxon and sign tests still give their finite p-values).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from rankscope.errors import InputError
from rankscope.stats._checks import (
    TOLERANCE,
    check_resamples,
    paired,
    safe_ratio,
    sd,
    two_sided_t_p,
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
    t_interval,
)

ZeroMethod = Literal["wilcox", "pratt", "zsplit"]

#: Randomization tests enumerate all 2**n sign vectors up to this many queries (automatic mode).
EXACT_MAX_QUERIES = 30
_EXACT_LIMIT = 40


@dataclass(frozen=True, slots=True)
class WinsTiesLosses:
    """Queries where ``a`` scores higher (wins), equal (ties) or lower (losses) than ``b``."""

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
    """Count queries where ``a > b``, ``a == b`` and ``a < b`` (exact float comparison)."""
    x, y = paired(a, b)
    return _wtl(x - y)


def _wtl(d: NDArray[np.float64]) -> WinsTiesLosses:
    return WinsTiesLosses(
        int(np.count_nonzero(d > 0)), int(np.count_nonzero(d == 0)), int(np.count_nonzero(d < 0))
    )


def from_differences(
    test: str,
    d: NDArray[np.float64],
    statistic: float,
    p: float,
    interval: Interval,
    resamples: int | None = None,
    exact: bool = False,
) -> PairedTest:
    w = _wtl(d)
    delta = float(d.mean())
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


def t_statistic(d: NDArray[np.float64]) -> float:
    """``mean(d) / (sd(d) / sqrt(n))``; 0 for all-zero d, ±inf for zero spread."""
    return safe_ratio(float(d.mean()), sd(d) / math.sqrt(d.size))


def paired_t(a: Any, b: Any, *, level: float = 0.95) -> PairedTest:
    """Student's paired t test (two-sided, n - 1 degrees of freedom)."""
    x, y = paired(a, b)
    d = x - y
    t = t_statistic(d)
    return from_differences("t", d, t, two_sided_t_p(t, d.size - 1), t_interval(d, level))


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
    ``|T*| >= |T| - gamma``, where ``gamma = 100 * eps * sum(|d|)`` absorbs rounding (sums
    that are equal in exact arithmetic can differ in the last bits; scipy's
    ``permutation_test`` uses ``100 * eps * |T|``, which vanishes when T is 0 in theory but not
    in floating point). ``exact`` None enumerates all ``2**n`` vectors when n <= 30 (p = k / 2**n,
    the identity included), else draws ``resamples`` random vectors (``p = (k + 1) / (B + 1)``).
    """
    x, y = paired(a, b)
    d = x - y
    p, exact_used = randomization_pvalues(d[:, None], resamples=resamples, seed=seed, exact=exact)
    return from_differences(
        "randomization",
        d,
        float(d.sum()),
        float(p[0]),
        t_interval(d, level),
        None if exact_used else resamples,
        exact_used,
    )


def randomization_pvalues(
    differences: NDArray[np.float64],
    *,
    resamples: int = 10_000,
    seed: int = 0,
    exact: bool | None = None,
) -> tuple[NDArray[np.float64], bool]:
    """Randomization p-values for each column of ``differences`` (queries × pairs), all pairs
    seeing the same random sign vectors; returns the p-values and whether they are exact."""
    n, k = differences.shape
    if exact is None:
        exact = n <= EXACT_MAX_QUERIES
    observed = np.abs(differences.sum(axis=0))
    thresholds = observed - TOLERANCE * np.abs(differences).sum(axis=0)
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
    equal has ``t* = 0``. The interval of ``mean(d)`` is the BCa (default) or percentile
    bootstrap interval from the same resamples, unshifted.
    """
    x, y = paired(a, b)
    d = x - y
    p, intervals = bootstrap_pvalues(
        d[:, None], resamples=resamples, seed=seed, interval=interval, level=level
    )
    return from_differences("bootstrap", d, t_statistic(d), float(p[0]), intervals[0], resamples)


def bootstrap_pvalues(
    differences: NDArray[np.float64],
    *,
    resamples: int = 10_000,
    seed: int = 0,
    interval: BootstrapMethod = "bca",
    level: float = 0.95,
) -> tuple[NDArray[np.float64], list[Interval]]:
    """Studentized paired bootstrap p-values and intervals for each column of ``differences``
    (queries × pairs); every pair sees the same resampled queries."""
    resamples = check_resamples(resamples)
    n, k = differences.shape
    means = differences.mean(axis=0)
    shifted = differences - means
    boot_means, boot_squares = bootstrap_moments(shifted, resamples, seed)
    variance = np.maximum(boot_squares - boot_means**2, 0.0) * (n / (n - 1))
    boot_sd = np.sqrt(variance)
    # spread within rounding of the values' size counts as none (see _checks.sd)
    scale = np.abs(shifted).max(axis=0)
    boot_sd[boot_sd <= TOLERANCE * scale] = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        t_star = np.where(boot_sd > 0, boot_means / (boot_sd / math.sqrt(n)), 0.0)
    t_obs = np.abs(np.asarray([t_statistic(differences[:, j]) for j in range(k)]))
    hits = np.abs(t_star) >= t_obs * (1.0 - TOLERANCE)
    p = (hits.sum(axis=0) + 1.0) / (resamples + 1.0)
    # identical systems: t = 0 and every resample reaches it
    intervals = [
        interval_from_bootstrap(differences[:, j], boot_means[:, j] + means[j], level, interval)
        for j in range(k)
    ]
    return p, intervals


def wilcoxon_test(
    a: Any, b: Any, *, zero_method: ZeroMethod = "wilcox", level: float = 0.95
) -> PairedTest:
    """Wilcoxon's signed-rank test (``scipy.stats.wilcoxon``, two-sided, method ``auto``).

    Zero differences: ``wilcox`` (default, as scipy and R) drops them and ranks the rest;
    ``pratt`` ranks them with the others and then drops their ranks; ``zsplit`` splits their
    ranks evenly between the positive and negative sums. Tied absolute differences get mid-ranks.
    When every difference is 0 the test is not defined; rankscope reports ``p = 1``, W = 0.
    The statistic is W, the smaller of the two signed-rank sums. The p-value is exact for
    n <= 50 without zeros or tied ``|d|``, and for any data with n <= 13 (all ``2**n`` signs
    enumerated); otherwise it comes from the normal approximation with continuity correction.
    """
    from scipy import stats

    if zero_method not in ("wilcox", "pratt", "zsplit"):
        raise InputError(
            "unknown zero_method for the Wilcoxon test",
            value=zero_method,
            hint="use wilcox, pratt or zsplit",
        )
    x, y = paired(a, b)
    d = x - y
    if not d.any():
        return from_differences("wilcoxon", d, 0.0, 1.0, t_interval(d, level))
    result = stats.wilcoxon(d, zero_method=zero_method, alternative="two-sided", method="auto")
    p = float(result.pvalue)
    if math.isnan(p):  # pragma: no cover - scipy gives NaN only when nothing is left to rank
        p = 1.0
    # scipy's "auto": the exact null distribution for n <= 50 without zeros or tied |d|; a full
    # enumeration of the 2**n signs for n <= 13 otherwise; the normal approximation (with
    # continuity and tie corrections) beyond that.
    untied = bool(d.all()) and np.unique(np.abs(d)).size == d.size
    exact = d.size <= 13 or (untied and d.size <= 50)
    return from_differences(
        "wilcoxon", d, float(result.statistic), p, t_interval(d, level), exact=exact
    )


def sign_test(a: Any, b: Any, *, level: float = 0.95) -> PairedTest:
    """The sign test: wins among the queries that differ, against Binomial(wins + losses, 1/2)
    (exact two-sided ``scipy.stats.binomtest``); ties are dropped; no difference gives p = 1."""
    from scipy import stats

    x, y = paired(a, b)
    d = x - y
    w = _wtl(d)
    trials = w.wins + w.losses
    p = 1.0 if trials == 0 else float(stats.binomtest(w.wins, trials, 0.5).pvalue)
    return from_differences("sign", d, float(w.wins), p, t_interval(d, level), exact=True)


__all__ = [
    "EXACT_MAX_QUERIES",
    "PairedTest",
    "WinsTiesLosses",
    "ZeroMethod",
    "bootstrap_pvalues",
    "bootstrap_test",
    "paired_t",
    "randomization_pvalues",
    "randomization_test",
    "sign_test",
    "t_statistic",
    "wilcoxon_test",
    "wins_ties_losses",
]
