"""The confidence interval of a mean, from what SQL aggregates give (count, mean, variance).

A Student t interval computed by :func:`rankscope.stats.t_interval_from_summary`, the one
implementation every table uses. The store sums the squared deviations from each group's mean
(never E[x^2] - E[x]^2, which cancels). Per-query IR measures are bounded and skewed, so for
small groups the interval is rough; it is clipped to the measures' range [0, 1].
"""

from __future__ import annotations

import math

from rankscope.service.schemas.records import MeanWithInterval
from rankscope.stats import t_interval_from_summary


def mean_interval(n: int, mean: float, variance: float, level: float = 0.95) -> MeanWithInterval:
    """Mean and t interval at ``level`` from n, the mean and the sample variance (n - 1).

    Fewer than two values give no interval (``None`` bounds); equal values give a zero-width one.
    """
    if n < 2:
        return MeanWithInterval(mean=mean, low=None, high=None)
    ci = t_interval_from_summary(n, mean, math.sqrt(max(0.0, variance)), level)
    return MeanWithInterval(mean=mean, low=max(0.0, ci.low), high=min(1.0, ci.high))


__all__ = ["mean_interval"]
