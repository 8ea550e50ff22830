"""Confidence intervals for a mean: Student's t, and bootstrap (percentile or BCa).

A mean of values that lie in a known range (most IR measures lie in [0, 1]) lies in it too; the
t interval does not know that and, for few queries or a mean near an end, reaches past it
([0.18, 1.39] for two queries). :func:`t_interval` and :func:`t_interval_from_summary` given
``bounds`` clip the interval to the range and mark it ``clipped`` (the bootstrap intervals lie
in the range by construction: they are quantiles of resampled means).

Used for one system's mean score and for a mean difference between two systems. The bootstrap
resamples queries with replacement (:mod:`rankscope.stats._resample`); the BCa interval follows
Efron and Tibshirani (1993, 14.3) exactly as ``scipy.stats.bootstrap`` computes it, with the
jackknife of the mean in closed form.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from rankscope.errors import InputError
from rankscope.stats._checks import TOLERANCE, as_vector, check_resamples, sd
from rankscope.stats._resample import bootstrap_moments

BootstrapMethod = Literal["percentile", "bca"]


@dataclass(frozen=True, slots=True)
class Interval:
    """A confidence interval ``[low, high]`` at ``level`` (0.95), computed by ``method``:
    ``t``, ``percentile``, ``bca``, ``tukey`` or ``randomized-tukey`` (the last two are
    simultaneous over all pairs of systems). ``clipped``: an end was cut back to the range
    the values lie in (:func:`t_interval` with ``bounds``)."""

    low: float
    high: float
    level: float
    method: str
    clipped: bool = False

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2.0

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high


def check_level(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise InputError("a confidence level must lie strictly between 0 and 1", value=level)
    return float(level)


Bounds = tuple[float, float]
#: the range of a proportion, and of most IR measures (:attr:`rankscope.stats.Quantity.bounds`)
UNIT_RANGE: Bounds = (0.0, 1.0)


def t_interval(values: Any, level: float = 0.95, *, bounds: Bounds | None = None) -> Interval:
    """Student's t interval of the mean: ``mean ± t(1-(1-level)/2, n-1) * sd / sqrt(n)``.

    Zero spread gives ``[mean, mean]``; a single value gives ``[value, value]``. ``bounds``
    (``(low, high)``, e.g. :data:`UNIT_RANGE`): the range every value lies in by definition;
    the interval is clipped to it and marked ``clipped`` when it reached past. Values outside
    the range (the bounds did not hold for these data) leave the interval unclipped.
    """
    x = as_vector(values)
    if x.size == 0:
        raise InputError("an interval needs at least one value")
    if bounds is not None and (x.min() < bounds[0] or x.max() > bounds[1]):
        bounds = None
    return t_interval_from_summary(int(x.size), float(x.mean()), sd(x), level, bounds=bounds)


def t_interval_from_summary(
    n: int, mean: float, std: float, level: float = 0.95, *, bounds: Bounds | None = None
) -> Interval:
    """:func:`t_interval` from the count, mean and sample standard deviation alone (what SQL
    aggregates give without reading every value, as the collection service does); ``bounds``
    as for :func:`t_interval` (a mean outside them leaves the interval unclipped)."""
    from scipy import stats

    level = check_level(level)
    if n < 1:
        raise InputError("an interval needs at least one value", value=n)
    if bounds is not None and not bounds[0] <= bounds[1]:
        raise InputError("bounds must be (low, high) with low <= high", value=bounds)
    if n < 2 or std == 0.0:
        return Interval(mean, mean, level, "t")
    margin = float(stats.t.ppf(0.5 + level / 2.0, n - 1)) * std / math.sqrt(n)
    low, high = mean - margin, mean + margin
    if bounds is None or not bounds[0] <= mean <= bounds[1]:
        return Interval(low, high, level, "t")
    clipped = low < bounds[0] or high > bounds[1]
    return Interval(max(low, bounds[0]), min(high, bounds[1]), level, "t", clipped)


def bootstrap_interval(
    values: Any,
    level: float = 0.95,
    *,
    method: BootstrapMethod = "bca",
    resamples: int = 10_000,
    seed: int = 0,
) -> Interval:
    """Bootstrap interval of the mean (``percentile`` or ``bca``), ``resamples`` seeded draws."""
    x = as_vector(values)
    if x.size == 0:
        raise InputError("an interval needs at least one value")
    return bootstrap_intervals(x[:, None], level, method=method, resamples=resamples, seed=seed)[0]


def bootstrap_intervals(
    columns: NDArray[np.float64],
    level: float = 0.95,
    *,
    method: BootstrapMethod = "bca",
    resamples: int = 10_000,
    seed: int = 0,
) -> list[Interval]:
    """Bootstrap intervals of the mean of each column (queries × k), from shared resamples."""
    level = check_level(level)
    resamples = check_resamples(resamples)
    if method not in ("percentile", "bca"):
        raise InputError("unknown bootstrap interval", value=method, hint="use percentile or bca")
    means, _ = bootstrap_moments(columns, resamples, seed)
    out = []
    for k in range(columns.shape[1]):
        x = columns[:, k]
        out.append(interval_from_bootstrap(x, means[:, k], level, method))
    return out


def interval_from_bootstrap(
    values: NDArray[np.float64],
    distribution: NDArray[np.float64],
    level: float,
    method: BootstrapMethod,
    *,
    estimate: float | None = None,
) -> Interval:
    """The percentile or BCa interval of ``mean(values)`` from its bootstrap ``distribution``.

    Quantiles are linear interpolations (numpy's default, as scipy). For BCa the bias
    correction uses the share of resampled means below the estimate (``estimate``, default
    ``mean(values)``), ties counting half, where a resampled mean within ``100 eps *
    max|values|`` of the estimate is a tie (a resample that is a permutation of the queries
    has the same mean in exact arithmetic, but its sum is added in another order); the share is
    clipped to ``[1/(2B), 1 - 1/(2B)]`` so that a degenerate distribution gives a finite
    interval, and the acceleration uses the jackknife of the mean (0 when all values are equal up to
    rounding).
    """
    from scipy.special import ndtr, ndtri

    alpha = (1.0 - level) / 2.0
    if method == "percentile":
        quantiles = [alpha, 1.0 - alpha]
    else:
        centre = float(values.mean()) if estimate is None else float(estimate)
        tolerance = TOLERANCE * float(np.abs(values).max(initial=0.0))
        b = distribution.size
        below = int(np.count_nonzero(distribution < centre - tolerance))
        tied = int(np.count_nonzero(np.abs(distribution - centre) <= tolerance))
        share = (below + tied / 2.0) / b
        share = min(max(share, 1.0 / (2.0 * b)), 1.0 - 1.0 / (2.0 * b))
        z0 = float(ndtri(share))
        n = values.size
        jackknife = (values.sum() - values) / (n - 1) if n > 1 else values.copy()
        u = (n - 1) * (jackknife.mean() - jackknife)
        denominator = float((u**2).sum()) / n**2
        # values equal up to rounding have jackknife deviations of pure noise, whose skewness
        # ratio could be anything: no spread, no acceleration
        flat = denominator == 0.0 or sd(values) == 0.0
        acceleration = 0.0 if flat else float((u**3).sum()) / n**3 / 6.0 / denominator**1.5
        quantiles = []
        for z in (float(ndtri(alpha)), -float(ndtri(alpha))):
            shifted = z0 + z
            quantiles.append(float(ndtr(z0 + shifted / (1.0 - acceleration * shifted))))
    low, high = np.quantile(distribution, quantiles).tolist()
    return Interval(float(low), float(high), level, method)


__all__ = [
    "UNIT_RANGE",
    "BootstrapMethod",
    "Bounds",
    "Interval",
    "bootstrap_interval",
    "bootstrap_intervals",
    "interval_from_bootstrap",
    "t_interval",
    "t_interval_from_summary",
]
