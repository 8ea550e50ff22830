"""Many systems on the same queries: two-way ANOVA, Tukey HSD, randomised Tukey HSD, and
p-value corrections.

All functions take a matrix ``x`` of scores, systems × queries (every system on every query).
Queries are blocks: the ANOVA is the two-way ANOVA without replication (systems × queries), and
Tukey's HSD uses its residual variance ``V_E`` with ``(m - 1)(n - 1)`` degrees of freedom, as in
Sakai (2014, 2018). Pairs are reported for ``i < j`` with ``delta = mean_i - mean_j``.
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
    as_matrix,
    check_queries,
    check_resamples,
    safe_ratio,
)
from rankscope.stats._resample import permuted_ranges
from rankscope.stats.intervals import Interval, check_level

Correction = Literal["holm", "bonferroni", "bh", "none"]
#: the multiple-comparison corrections (``adjust_pvalues(method=)``, ``--correction``)
CORRECTIONS: tuple[str, ...] = ("holm", "bonferroni", "bh", "none")


@dataclass(frozen=True, slots=True)
class Anova:
    """Two-way ANOVA without replication (systems × queries).

    ``ms_residual`` is Sakai's ``V_E``. With no residual variance, ``f`` is 0 when the systems'
    means are equal (``p = 1``) and infinite otherwise (``p = 0``).
    """

    systems: int
    queries: int
    ss_systems: float
    ss_queries: float
    ss_residual: float
    ss_total: float
    df_systems: int
    df_queries: int
    df_residual: int
    ms_residual: float
    f: float
    p_value: float


def _residual_floor(x: NDArray[np.float64]) -> float:
    """Sums of squares below this are rounding noise (the data's squared scale times 100 eps)."""
    return TOLERANCE * float((x * x).sum())


def anova_two_way(scores: Any) -> Anova:
    """Two-way ANOVA without replication of ``scores`` (systems × queries)."""
    from scipy import stats

    x = _systems_matrix(scores)
    m, n = x.shape
    grand = float(x.mean())
    ss_systems = float(n * ((x.mean(axis=1) - grand) ** 2).sum())
    ss_queries = float(m * ((x.mean(axis=0) - grand) ** 2).sum())
    ss_total = float(((x - grand) ** 2).sum())
    ss_residual = max(ss_total - ss_systems - ss_queries, 0.0)
    floor = _residual_floor(x)
    if ss_residual <= floor:
        ss_residual = 0.0
    if ss_systems <= floor:
        ss_systems = 0.0
    df_s, df_q, df_e = m - 1, n - 1, (m - 1) * (n - 1)
    v_e = ss_residual / df_e
    f = safe_ratio(ss_systems / df_s, v_e)
    p = 0.0 if math.isinf(f) else (float(stats.f.sf(f, df_s, df_e)) if f > 0 else 1.0)
    return Anova(m, n, ss_systems, ss_queries, ss_residual, ss_total, df_s, df_q, df_e, v_e, f, p)


@dataclass(frozen=True, slots=True)
class PairResult:
    """One pair of systems ``(first, second)`` (indices into the systems), ``first < second``.

    ``delta`` is ``mean(first) - mean(second)``; ``p_value`` is what the test gives (already
    family-wise for Tukey and randomised Tukey), ``p_adjusted`` the corrected value;
    ``interval`` is the interval of ``delta``.
    """

    first: int
    second: int
    delta: float
    statistic: float
    p_value: float
    p_adjusted: float
    effect_size: float
    interval: Interval


@dataclass(frozen=True, slots=True)
class Pairwise:
    """All pairs of ``systems`` systems compared by ``test`` over ``queries`` queries.

    ``correction`` is how ``p_adjusted`` was obtained (``tukey`` for the two Tukey tests, whose
    p-values hold for the family of all pairs). ``resamples`` is None for analytic tests.
    """

    test: str
    systems: int
    queries: int
    correction: str
    pairs: tuple[PairResult, ...]
    resamples: int | None = None

    def pair(self, i: int, j: int) -> PairResult:
        """The result for systems ``i`` and ``j`` (in either order; ``delta`` is ``i - j``)."""
        if i == j:
            raise InputError("a system is not compared with itself", value=i)
        for r in self.pairs:
            if (r.first, r.second) == (i, j):
                return r
            if (r.first, r.second) == (j, i):
                low, high = -r.interval.high, -r.interval.low
                flipped = Interval(low, high, r.interval.level, r.interval.method)
                return PairResult(
                    i,
                    j,
                    -r.delta,
                    -r.statistic,
                    r.p_value,
                    r.p_adjusted,
                    -r.effect_size,
                    flipped,
                )
        raise InputError("no such pair of systems", value=(i, j))

    def p_matrix(self, adjusted: bool = True) -> NDArray[np.float64]:
        """Symmetric ``systems × systems`` matrix of p-values (1 on the diagonal)."""
        out = np.ones((self.systems, self.systems), dtype=np.float64)
        for r in self.pairs:
            value = r.p_adjusted if adjusted else r.p_value
            out[r.first, r.second] = out[r.second, r.first] = value
        return out


def _systems_matrix(scores: Any) -> NDArray[np.float64]:
    x = as_matrix(scores)
    if x.shape[0] < 2:
        raise InputError(
            "comparing systems needs at least two systems", value=x.shape[0], hint="add a run"
        )
    check_queries(x.shape[1])
    return x


def _pair_indices(m: int) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    first, second = np.triu_indices(m, 1)
    return first, second


def tukey_hsd(scores: Any, *, level: float = 0.95) -> Pairwise:
    """Tukey's HSD with queries as blocks, over all pairs of systems.

    ``q = |delta| / sqrt(V_E / n)`` against the studentized range distribution with ``m``
    groups and ``(m - 1)(n - 1)`` degrees of freedom; simultaneous intervals
    ``delta ± q_crit * sqrt(V_E / n)``; effect size ``delta / sqrt(V_E)``. The reported
    statistic is q with the sign of delta.
    """
    from scipy import stats

    x = _systems_matrix(scores)
    level = check_level(level)
    m, n = x.shape
    anova = anova_two_way(x)
    v_e = anova.ms_residual
    se = math.sqrt(v_e / n)
    q_crit = float(stats.studentized_range.ppf(level, m, anova.df_residual)) if se > 0 else 0.0
    means = x.mean(axis=1)
    pairs = []
    for i, j in zip(*_pair_indices(m), strict=True):
        delta = float(means[i] - means[j])
        if abs(delta) <= TOLERANCE * float(np.abs(means).max()):
            delta = 0.0
        q = safe_ratio(delta, se)  # signed; the test uses |q|
        if math.isinf(q):
            p = 0.0
        elif q == 0:
            p = 1.0
        else:
            p = float(min(1.0, stats.studentized_range.sf(abs(q), m, anova.df_residual)))
        half = q_crit * se
        interval = Interval(delta - half, delta + half, level, "tukey")
        es = safe_ratio(delta, math.sqrt(v_e))
        pairs.append(PairResult(int(i), int(j), delta, q, p, p, es, interval))
    return Pairwise("tukey", m, n, "tukey", tuple(pairs))


def randomized_tukey_hsd(
    scores: Any, *, resamples: int = 10_000, seed: int = 0, level: float = 0.95
) -> Pairwise:
    """Randomised Tukey HSD (Carterette 2012; Sakai 2014), all pairs, family-wise.

    Each draw permutes every query's scores across the systems (independently per query) and
    records ``max mean - min mean``. A pair's ``p = (k + 1) / (B + 1)``, k counting draws whose
    range reaches ``|delta|`` (tolerance ``100 eps`` of the summed scores' size). The
    simultaneous interval is ``delta ± r``, r the ``level`` quantile of the ranges. The effect
    size is ``delta / sqrt(V_E)`` (V_E from the two-way ANOVA). The statistic is ``delta``.
    """
    x = _systems_matrix(scores)
    resamples = check_resamples(resamples)
    level = check_level(level)
    m, n = x.shape
    ranges = permuted_ranges(x, resamples, seed)  # in totals (n × means)
    gamma = TOLERANCE * float(np.abs(x).max(axis=0).sum())
    sorted_ranges = np.sort(ranges)
    totals = x.sum(axis=1)
    v_e = anova_two_way(x).ms_residual
    critical = float(np.quantile(ranges, level)) / n
    pairs = []
    for i, j in zip(*_pair_indices(m), strict=True):
        gap = abs(float(totals[i] - totals[j]))
        reached = sorted_ranges.size - np.searchsorted(sorted_ranges, gap - gamma, side="left")
        p = (float(reached) + 1.0) / (resamples + 1.0)
        delta = float(totals[i] - totals[j]) / n
        if gap <= gamma:
            delta = 0.0
        interval = Interval(delta - critical, delta + critical, level, "randomized-tukey")
        es = safe_ratio(delta, math.sqrt(v_e))
        pairs.append(PairResult(int(i), int(j), delta, delta, p, p, es, interval))
    return Pairwise("rtukey", m, n, "tukey", tuple(pairs), resamples)


def adjust_pvalues(p_values: Any, method: Correction = "holm") -> NDArray[np.float64]:
    """Corrected p-values for one family of tests.

    - ``holm``: Holm's step-down (controls the family-wise error rate; never less powerful than
      Bonferroni).
    - ``bonferroni``: ``min(1, k * p)``.
    - ``bh``: Benjamini-Hochberg step-up (controls the false discovery rate), as
      ``scipy.stats.false_discovery_control``.
    - ``none``: unchanged.
    """
    p = np.array(p_values, dtype=np.float64).reshape(-1)
    if p.size and (np.isnan(p).any() or (p < 0).any() or (p > 1).any()):
        raise InputError("p-values must lie between 0 and 1", value=p.tolist())
    k = p.size
    if method == "none" or k <= 1:
        if method not in CORRECTIONS:
            raise InputError("unknown correction", value=method, hint=_CORRECTION_HINT)
        return p.copy()
    if method == "bonferroni":
        return np.minimum(1.0, p * k)
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if method == "holm":
        stepped = np.maximum.accumulate(np.minimum(1.0, (k - np.arange(k)) * ranked))
    elif method == "bh":
        scaled = ranked * k / np.arange(1, k + 1)
        stepped = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    else:
        raise InputError("unknown correction", value=method, hint=_CORRECTION_HINT)
    out = np.empty(k, dtype=np.float64)
    out[order] = stepped
    return out


_CORRECTION_HINT = "use holm, bonferroni, bh or none"


def correct_pairwise(result: Pairwise, method: Correction) -> Pairwise:
    """``result`` with ``p_adjusted`` corrected over its pairs (the family is all the pairs)."""
    adjusted = adjust_pvalues([r.p_value for r in result.pairs], method)
    pairs = tuple(
        PairResult(
            r.first, r.second, r.delta, r.statistic, r.p_value, float(a), r.effect_size, r.interval
        )
        for r, a in zip(result.pairs, adjusted.tolist(), strict=True)
    )
    return Pairwise(result.test, result.systems, result.queries, method, pairs, result.resamples)


__all__ = [
    "CORRECTIONS",
    "Anova",
    "Correction",
    "PairResult",
    "Pairwise",
    "adjust_pvalues",
    "anova_two_way",
    "correct_pairwise",
    "randomized_tukey_hsd",
    "tukey_hsd",
]
