"""Two independent samples: Welch's t test and a bootstrap interval of the difference of means.

An online A/B test sends different queries to each arm, so the per-query scores of the two arms
are not paired: Welch's test (unequal variances, Welch–Satterthwaite degrees of freedom) is the
default there, with a bootstrap interval that resamples each arm on its own. ``delta`` is
``mean(a) - mean(b)``, positive when ``a`` scores higher; every test is two-sided.

Effect size: Cohen's d with the pooled standard deviation,
``d = delta / sqrt(((n_a - 1) var_a + (n_b - 1) var_b) / (n_a + n_b - 2))``.

Degenerate input: both samples constant and equal gives ``t = 0``, ``p = 1`` and the interval
``[0, 0]``; both constant but different gives ``t = ±inf`` and ``p = 0`` (the degrees of
freedom are then ``n_a + n_b - 2``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rankscope.errors import InputError
from rankscope.stats._checks import (
    as_vector,
    check_resamples,
    safe_ratio,
    sd,
    two_sided_t_p,
    unit_scale,
)
from rankscope.stats._resample import generator
from rankscope.stats.intervals import Interval, check_level

#: the random stream of the two-sample bootstrap (the paired procedures use 1-3)
STREAM_TWO_SAMPLE = 4
_CHUNK_ELEMENTS = 1 << 20


@dataclass(frozen=True, slots=True)
class TwoSampleTest:
    """Welch's test of ``mean(a) - mean(b)``.

    - ``interval``: the Welch t interval of ``delta``; ``bootstrap``: the percentile bootstrap
      interval of ``delta`` (each sample resampled on its own), when asked for.
    - ``df``: Welch–Satterthwaite degrees of freedom.
    - ``effect_size``: Cohen's d with the pooled standard deviation.
    """

    test: str
    n_a: int
    n_b: int
    mean_a: float
    mean_b: float
    delta: float
    statistic: float
    df: float
    p_value: float
    effect_size: float
    interval: Interval
    bootstrap: Interval | None = None
    resamples: int | None = None


def _samples(a: Any, b: Any) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    x = as_vector(a, "first sample")
    y = as_vector(b, "second sample")
    if x.size < 2 or y.size < 2:
        raise InputError(
            "a two-sample test needs at least 2 values in each sample",
            value=(x.size, y.size),
            hint="collect more records for each arm",
        )
    return x, y


def welch_t(
    a: Any,
    b: Any,
    *,
    level: float = 0.95,
    bootstrap: int = 0,
    seed: int = 0,
) -> TwoSampleTest:
    """Welch's unequal-variance t test; ``bootstrap`` > 0 adds a percentile bootstrap interval
    of the difference from that many seeded resamples (each sample resampled on its own)."""
    from scipy import stats

    x, y = _samples(a, b)
    level = check_level(level)
    na, nb = x.size, y.size
    delta = float(x.mean() - y.mean())
    # variances and the standard error in units of the values' size (an exact power of two):
    # standard deviations below ~1e-162 squared to 0, and t = delta / 0 was a false -inf
    size = max(float(np.abs(x).max()), float(np.abs(y).max()))
    unit = unit_scale(size) if size > 0.0 else 1.0
    va, vb = (sd(x) * unit) ** 2, (sd(y) * unit) ** 2
    se = math.sqrt(va / na + vb / nb)
    if se == 0.0:
        df = float(na + nb - 2)
        t = safe_ratio(delta, 0.0)
        half = 0.0
    else:
        # Welch-Satterthwaite, scaled by the larger variance share: squaring tiny variances
        # (1e-321 for [0, 1e-160]) underflowed to 0 and divided by zero
        top = max(va / na, vb / nb)
        share_a, share_b = va / na / top, vb / nb / top
        df = (share_a + share_b) ** 2 / (share_a**2 / (na - 1) + share_b**2 / (nb - 1))
        t = delta * unit / se
        half = float(stats.t.ppf(0.5 + level / 2.0, df)) * se / unit
    pooled = math.sqrt(((na - 1) * va + (nb - 1) * vb) / (na + nb - 2))
    boot = None
    if bootstrap:
        boot = bootstrap_difference(x, y, level=level, resamples=bootstrap, seed=seed)
    return TwoSampleTest(
        test="welch",
        n_a=int(na),
        n_b=int(nb),
        mean_a=float(x.mean()),
        mean_b=float(y.mean()),
        delta=delta,
        statistic=float(t),
        df=float(df),
        p_value=two_sided_t_p(t, df),
        effect_size=safe_ratio(delta * unit, pooled),
        interval=Interval(delta - half, delta + half, level, "welch"),
        bootstrap=boot,
        resamples=bootstrap or None,
    )


def bootstrap_difference(
    a: Any, b: Any, *, level: float = 0.95, resamples: int = 10_000, seed: int = 0
) -> Interval:
    """Percentile bootstrap interval of ``mean(a) - mean(b)``: each resample draws ``n_a``
    values of ``a`` and ``n_b`` of ``b`` with replacement, independently."""
    x, y = _samples(a, b)
    level = check_level(level)
    resamples = check_resamples(resamples)
    rng = generator(seed, STREAM_TWO_SAMPLE)
    diffs = _resampled_means(x, resamples, rng) - _resampled_means(y, resamples, rng)
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(diffs, [alpha, 1.0 - alpha]).tolist()
    return Interval(float(low), float(high), level, "percentile")


def _resampled_means(
    x: NDArray[np.float64], resamples: int, rng: np.random.Generator
) -> NDArray[np.float64]:
    n = x.size
    out = np.empty(resamples, dtype=np.float64)
    step = max(1, _CHUNK_ELEMENTS // n)
    for start in range(0, resamples, step):
        rows = min(step, resamples - start)
        picks = rng.integers(0, n, size=(rows, n), dtype=np.int64)
        out[start : start + rows] = x[picks].mean(axis=1)
    return out


__all__ = ["STREAM_TWO_SAMPLE", "TwoSampleTest", "bootstrap_difference", "welch_t"]
