"""The confidence interval of a mean, from what SQL aggregates give (count, mean, mean of squares).

A Student t interval computed by :func:`rankscope.stats.t_interval_from_summary`, the one
implementation every table uses. Per-query IR measures are bounded and skewed, so for small
groups the interval is rough; it is clipped to the measures' range [0, 1].
"""

from __future__ import annotations

import math

from rankscope.service.schemas.records import MeanWithInterval
from rankscope.stats import t_interval_from_summary


def mean_interval(
    n: int, mean: float, mean_of_squares: float, level: float = 0.95
) -> MeanWithInterval:
    """Mean and t interval at ``level`` from n, the mean and the mean of the squares.

    Fewer than two values give no interval (``None`` bounds); equal values give a zero-width one.
    """
    if n < 2:
        return MeanWithInterval(mean=mean, low=None, high=None)
    variance = max(0.0, (mean_of_squares - mean * mean) * n / (n - 1))
    ci = t_interval_from_summary(n, mean, math.sqrt(variance), level)
    return MeanWithInterval(mean=mean, low=max(0.0, ci.low), high=min(1.0, ci.high))


__all__ = ["mean_interval"]
