"""Non-inferiority of a candidate against a baseline on one query set: is a drop real?

A threshold test ("fail below 0.6") cannot tell a real drop from the noise of the queries; a
test of difference ("is the candidate significantly worse?") passes whenever there are too few
queries to see anything. Non-inferiority asks the question a regression gate means: is the
candidate at most ``margin`` worse than the baseline, with confidence ``1 - alpha``?

With ``d = candidate - baseline`` per query, the one-sided ``1 - alpha`` lower confidence bound
of ``mean(d)`` is the paired t bound ``mean(d) - t(1 - alpha, n - 1) * sd(d) / sqrt(n)`` (the
lower end of the two-sided ``1 - 2 alpha`` interval of :func:`rankscope.stats.paired_t`). The
candidate is **non-inferior** when that bound is at least ``-margin``; equivalently the
one-sided paired t test of ``H0: mean(d) <= -margin`` rejects at ``alpha`` (``p_value``). The
paired t interval, not a bootstrap one: it is exact under normality, close for the means of
hundreds of bounded per-query scores, and the same on every run (no seed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from rankscope.errors import InputError
from rankscope.stats._checks import sd
from rankscope.stats.paired import differences, mean_difference, paired_t


@dataclass(frozen=True, slots=True)
class NonInferiority:
    """The non-inferiority test of a candidate against a baseline over ``n`` queries.

    ``delta``: ``mean(candidate - baseline)``; ``lower``: its one-sided ``1 - alpha`` lower
    confidence bound (paired t); ``p_value``: the one-sided p of ``H0: delta <= -margin``;
    ``inferior``: the bound is below ``-margin`` (the candidate may be worse by more than the
    margin: a regression)."""

    n: int
    delta: float
    lower: float
    margin: float
    alpha: float
    p_value: float
    test: str = "paired t, one-sided"

    @property
    def inferior(self) -> bool:
        return self.lower < -self.margin


def non_inferiority(
    candidate: Any, baseline: Any, *, margin: float, alpha: float = 0.05
) -> NonInferiority:
    """Test whether ``candidate`` is at most ``margin`` worse than ``baseline`` (per-query
    values over the same queries, higher is better) at confidence ``1 - alpha``."""
    from scipy import stats

    if not (isinstance(margin, int | float) and math.isfinite(margin) and margin >= 0):
        raise InputError("the margin must be a finite number >= 0", value=margin)
    if not (isinstance(alpha, int | float) and 0.0 < alpha < 0.5):
        raise InputError("alpha must lie strictly between 0 and 0.5", value=alpha, hint="e.g. 0.05")
    d, tolerance = differences(candidate, baseline)
    n = int(d.size)
    delta = mean_difference(d, tolerance)
    # the lower end of the two-sided 1 - 2 alpha interval is the one-sided 1 - alpha bound
    lower = paired_t(candidate, baseline, level=1.0 - 2.0 * alpha).interval.low
    spread = sd(d)
    shifted = delta + margin
    if spread == 0.0:
        p = 0.0 if shifted > 0 else 1.0
    else:
        p = float(stats.t.sf(shifted / (spread / math.sqrt(n)), n - 1))
    return NonInferiority(
        n=n, delta=delta, lower=float(lower), margin=float(margin), alpha=float(alpha), p_value=p
    )


__all__ = ["NonInferiority", "non_inferiority"]
