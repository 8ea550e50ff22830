"""How many queries a comparison needs: power of the paired t test.

With differences of standard deviation ``sd`` over ``n`` queries, the two-sided paired t test at
level ``alpha`` detects a true mean difference ``delta`` with probability (power)::

    power = P(|T| > t_crit),  T ~ noncentral t(df = n - 1, nc = delta * sqrt(n) / sd)

(Sakai's topic-set-size design uses the same model). :func:`queries_needed` gives the smallest n
with power >= the target; :func:`min_detectable_delta` the smallest delta detectable with the n
you have. ``sd`` is the observed sd of the per-query differences, so both are estimates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from rankscope.errors import InputError
from rankscope.stats._checks import as_vector, check_alpha, check_queries, sd

_MAX_QUERIES = 10_000_000


@dataclass(frozen=True, slots=True)
class PowerPlan:
    """Planning figures for one pair of systems.

    ``queries_needed`` is None when ``delta`` is 0 (no number of queries detects no difference)
    or more than ten million queries would be needed.
    """

    queries: int
    sd_difference: float
    delta: float
    alpha: float
    power: float
    queries_needed: int | None
    min_detectable_delta: float


def _check_power(power: float) -> float:
    if not 0.0 < power < 1.0:
        raise InputError("power must lie strictly between 0 and 1", value=power)
    return float(power)


def _check_sd(sd_difference: float) -> float:
    if not math.isfinite(sd_difference) or sd_difference < 0:
        raise InputError(
            "the standard deviation of differences must be a finite number >= 0",
            value=sd_difference,
        )
    return float(sd_difference)


def paired_t_power(delta: float, sd_difference: float, queries: int, alpha: float = 0.05) -> float:
    """Power of the two-sided paired t test (noncentral t) to detect ``delta``."""
    from scipy import stats

    check_alpha(alpha)
    check_queries(queries)
    sigma = _check_sd(sd_difference)
    if delta == 0:
        return alpha
    if sigma == 0:
        return 1.0
    df = queries - 1
    nc = abs(delta) * math.sqrt(queries) / sigma
    t_crit = float(stats.t.ppf(1.0 - alpha / 2.0, df))
    upper = float(stats.nct.sf(t_crit, df, nc))
    lower = float(stats.nct.cdf(-t_crit, df, nc))
    if not math.isfinite(lower):
        # scipy's noncentral t answers NaN for the far lower tail once nc is a few units (nc
        # 8.7 with df 2, nc 3.1 with df 100,000); the tail is then 0 to double precision
        # (scipy's nct.sf(t_crit, df, -nc), the same tail by symmetry, gives 0 there). Only this
        # tail is replaced: the normal approximation of the whole power is wrong with few
        # queries (0.103 instead of 0.531 for delta 5, sd 1, 3 queries, alpha 0.01).
        lower = 0.0
    if not math.isfinite(upper):  # pragma: no cover - not seen from scipy 1.17
        raise InputError(
            "the power of the paired t test could not be computed",
            value={"delta": delta, "sd": sigma, "queries": queries, "alpha": alpha},
        )
    return min(1.0, upper + lower)


def queries_needed(
    delta: float, sd_difference: float, *, alpha: float = 0.05, power: float = 0.8
) -> int | None:
    """Smallest number of queries (>= 2) whose paired t test has ``power`` to detect ``delta``.

    None when ``delta`` is 0 or more than ten million queries would be needed; 2 when ``sd``
    is 0 (any non-zero difference is then certain).
    """
    from scipy import stats

    check_alpha(alpha)
    _check_power(power)
    sigma = _check_sd(sd_difference)
    if delta == 0:
        return None
    if sigma == 0:
        return 2
    z = float(stats.norm.ppf(1.0 - alpha / 2.0) + stats.norm.ppf(power))
    n = max(2, math.ceil((z * sigma / abs(delta)) ** 2))  # normal approximation, then exact
    if n > _MAX_QUERIES:
        return None
    while paired_t_power(delta, sigma, n, alpha) < power:
        n += 1 if n < 1000 else max(1, n // 1000)
        if n > _MAX_QUERIES:
            return None
    while n > 2 and paired_t_power(delta, sigma, n - 1, alpha) >= power:
        n -= 1
    return n


def min_detectable_delta(
    queries: int, sd_difference: float, *, alpha: float = 0.05, power: float = 0.8
) -> float:
    """Smallest mean difference that ``queries`` queries detect with ``power`` (paired t)."""
    from scipy import optimize

    check_alpha(alpha)
    _check_power(power)
    check_queries(queries)
    sigma = _check_sd(sd_difference)
    if sigma == 0:
        return 0.0

    def gap(delta: float) -> float:
        return paired_t_power(delta, sigma, queries, alpha) - power

    high = sigma
    while gap(high) < 0:
        high *= 2.0
    return float(optimize.brentq(gap, 0.0, high, xtol=1e-12 * sigma, rtol=1e-12))


def power_plan(
    differences: Any,
    *,
    delta: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
) -> PowerPlan:
    """Planning figures from observed per-query differences: their sd, the queries needed to
    detect ``delta`` (default: the observed mean difference) and the smallest detectable delta
    with the queries observed."""
    d = as_vector(differences, "differences")
    check_queries(d.size)
    sigma = sd(d)
    target = abs(float(d.mean())) if delta is None else abs(float(delta))
    return PowerPlan(
        queries=int(d.size),
        sd_difference=sigma,
        delta=target,
        alpha=check_alpha(alpha),
        power=_check_power(power),
        queries_needed=queries_needed(target, sigma, alpha=alpha, power=power),
        min_detectable_delta=min_detectable_delta(d.size, sigma, alpha=alpha, power=power),
    )


__all__ = [
    "PowerPlan",
    "min_detectable_delta",
    "paired_t_power",
    "power_plan",
    "queries_needed",
]
