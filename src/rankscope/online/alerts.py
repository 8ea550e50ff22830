"""Regression checks: a current window against a baseline window, and an EWMA chart of daily
means.

**Window change.** ``delta = mean(current) - mean(baseline)`` with its interval:

- *paired* over queries seen in both windows (each query's values averaged per window; Student's
  paired t, ``rankscope.stats.paired_t``) when at least ``min_n`` queries are in both: the same
  queries before and after, so query difficulty cancels out;
- otherwise *unpaired* (Welch, ``rankscope.stats.welch_t``) when both windows hold at least
  ``min_n`` values;
- otherwise nothing is concluded (``method = "insufficient"``).

A **regression** needs both an effect of practical size and one beyond noise: ``delta <=
-min_delta`` and the whole interval below 0 (for a measure where lower is better, the signs
flip). A p-value alone never fires an alert.

**EWMA** (Roberts 1959) on daily means: the target ``mu0`` and ``sigma`` are the mean and
standard deviation of the baseline days' means; over the days after the baseline,
``z_t = lam x_t + (1 - lam) z_{t-1}`` from ``z_0 = mu0``; the lower control limit is
``mu0 - L sigma sqrt(lam / (2 - lam) (1 - (1 - lam)^(2t)))``. The chart signals when the last
day's ``z`` is beyond the limit (defaults ``lam`` 0.3, ``L`` 3).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from rankscope.stats import Interval, paired_t, welch_t

Method = Literal["paired_t", "welch", "insufficient"]


@dataclass(frozen=True)
class WindowChange:
    method: Method
    n_current: int
    n_baseline: int
    paired_queries: int
    current_mean: float | None
    baseline_mean: float | None
    delta: float | None
    interval: Interval | None
    effect_size: float | None
    p_value: float | None
    regression: bool
    reason: str


def window_change(
    current: Sequence[float],
    baseline: Sequence[float],
    *,
    current_by_query: Mapping[str, Sequence[float]] | None = None,
    baseline_by_query: Mapping[str, Sequence[float]] | None = None,
    min_n: int = 30,
    min_delta: float = 0.0,
    level: float = 0.95,
    higher_is_better: bool = True,
) -> WindowChange:
    """Compare the windows; see the module's description for the rule."""
    nc, nb = len(current), len(baseline)
    common: list[str] = []
    if current_by_query is not None and baseline_by_query is not None:
        common = sorted(set(current_by_query) & set(baseline_by_query))
    cm = float(np.mean(current)) if nc else None
    bm = float(np.mean(baseline)) if nb else None
    if len(common) >= max(2, min_n):
        assert current_by_query is not None and baseline_by_query is not None
        x = [float(np.mean(current_by_query[q])) for q in common]
        y = [float(np.mean(baseline_by_query[q])) for q in common]
        test = paired_t(x, y, level=level)
        method: Method = "paired_t"
        delta, interval, es, p = test.delta, test.interval, test.effect_size, test.p_value
    elif nc >= max(2, min_n) and nb >= max(2, min_n):
        two = welch_t(current, baseline, level=level)
        method = "welch"
        delta, interval, es, p = two.delta, two.interval, two.effect_size, two.p_value
    else:
        return WindowChange(
            "insufficient",
            nc,
            nb,
            len(common),
            cm,
            bm,
            None,
            None,
            None,
            None,
            False,
            f"too few values: {nc} current, {nb} baseline, {len(common)} queries in both "
            f"(at least {min_n} needed)",
        )
    sign = 1.0 if higher_is_better else -1.0
    worse = sign * delta <= -min_delta and (
        interval.high < 0 if higher_is_better else interval.low > 0
    )
    es_value = es if math.isfinite(es) else None
    reason = (
        f"{'paired over ' + str(len(common)) + ' queries' if method == 'paired_t' else 'Welch'}"
        f": delta {delta:+.4f}, {level:.0%} CI [{interval.low:+.4f}, {interval.high:+.4f}], "
        f"minimum delta {min_delta:g}"
    )
    return WindowChange(
        method, nc, nb, len(common), cm, bm, delta, interval, es_value, p, worse, reason
    )


@dataclass(frozen=True)
class EwmaChart:
    target: float
    sigma: float
    lam: float
    width: float
    values: tuple[float, ...]
    limits: tuple[float, ...]
    signal: bool


def ewma_chart(
    daily_means: Sequence[float],
    baseline_days: int,
    *,
    lam: float = 0.3,
    width: float = 3.0,
    higher_is_better: bool = True,
) -> EwmaChart | None:
    """The EWMA chart of the days after the first ``baseline_days``; None without at least two
    baseline days and one day after them."""
    if not 0 < lam <= 1:
        raise ValueError("lam must lie in (0, 1]")
    base = np.asarray(daily_means[:baseline_days], dtype=np.float64)
    watched = [float(v) for v in daily_means[baseline_days:]]
    if base.size < 2 or not watched:
        return None
    target = float(base.mean())
    sigma = float(base.std(ddof=1))
    z = target
    values, limits = [], []
    for t, x in enumerate(watched, start=1):
        z = lam * x + (1 - lam) * z
        spread = width * sigma * math.sqrt(lam / (2 - lam) * (1 - (1 - lam) ** (2 * t)))
        values.append(z)
        limits.append(target - spread if higher_is_better else target + spread)
    last, limit = values[-1], limits[-1]
    signal = last < limit if higher_is_better else last > limit
    return EwmaChart(target, sigma, lam, width, tuple(values), tuple(limits), signal)


__all__ = ["EwmaChart", "Method", "WindowChange", "ewma_chart", "window_change"]
