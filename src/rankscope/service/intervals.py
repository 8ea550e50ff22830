"""The confidence interval of a mean, in one place so that a statistics module can replace it.

A Student t interval from the count, mean and sample standard deviation (what SQL aggregates
give without reading every row). Per-query IR measures are bounded and skewed, so for small
groups the interval is rough; it is clipped to the measures' range [0, 1].
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class MeanInterval:
    mean: float
    low: float | None
    high: float | None


def mean_interval(n: int, mean: float, mean_of_squares: float, level: float = 0.95) -> MeanInterval:
    """Mean and t interval at ``level`` from n, the mean and the mean of the squares.

    Fewer than two values give no interval (``None`` bounds); equal values give a zero-width one.
    """
    from scipy.stats import t

    if n < 2:
        return MeanInterval(mean, None, None)
    variance = max(0.0, (mean_of_squares - mean * mean) * n / (n - 1))
    half = float(t.ppf(0.5 + level / 2, n - 1)) * math.sqrt(variance / n)
    return MeanInterval(mean, max(0.0, mean - half), min(1.0, mean + half))


__all__ = ["MeanInterval", "mean_interval"]
