"""Input checks and numerical conventions shared by the statistics modules."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rankscope.errors import InputError

#: Relative tolerance for "theoretically equal" floats: a resampled statistic within
#: ``TOLERANCE * scale`` of the observed one counts as equal (scipy.stats.permutation_test uses
#: ``100 * eps``; rankscope uses the same factor, relative to the size of the summed terms).
TOLERANCE = 100.0 * float(np.finfo(np.float64).eps)


class StatsWarning(UserWarning):
    """A comparison ran but its result deserves caution (few queries, zero variance, ...)."""


def as_vector(values: Any, name: str = "scores") -> NDArray[np.float64]:
    """A 1-D float64 copy of ``values``; refuses NaN and infinity."""
    array = np.array(values, dtype=np.float64)
    if array.ndim != 1:
        raise InputError(f"{name} must be one value per query (a 1-D array)", value=array.shape)
    check_finite(array, name)
    return array


def as_matrix(values: Any, name: str = "scores") -> NDArray[np.float64]:
    """A 2-D float64 copy (systems × queries); refuses NaN and infinity."""
    array = np.array(values, dtype=np.float64)
    if array.ndim != 2:
        raise InputError(
            f"{name} must be a systems × queries matrix (a 2-D array)", value=array.shape
        )
    check_finite(array, name)
    return array


def check_finite(array: NDArray[np.float64], name: str) -> None:
    bad = ~np.isfinite(array)
    if bad.any():
        where = np.argwhere(bad)[0].tolist()
        raise InputError(
            f"{name} hold a NaN or infinite value at position {where}",
            value=float(array[tuple(where)]),
            hint="per-query values must be finite numbers (aggregate-only measures such as "
            "gm_map have no per-query values)",
        )


def paired(a: Any, b: Any) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Two per-query vectors over the same queries (same length, at least two queries)."""
    x = as_vector(a, "first scores")
    y = as_vector(b, "second scores")
    if x.shape != y.shape:
        raise InputError(
            "paired scores must cover the same queries (equal lengths)",
            value=(x.size, y.size),
            hint="align both systems to one query set first (rankscope.stats.align_scores)",
        )
    check_queries(x.size)
    return x, y


def check_queries(n: int) -> None:
    if n < 2:
        raise InputError(
            "a paired test needs at least 2 queries",
            value=n,
            hint="compare systems on more queries (with fewer than 5 no test is reliable)",
        )


def check_alpha(alpha: float) -> float:
    if not 0.0 < alpha < 1.0:
        raise InputError("alpha must lie strictly between 0 and 1", value=alpha)
    return float(alpha)


def check_resamples(resamples: int) -> int:
    if resamples < 1:
        raise InputError("the number of resamples must be at least 1", value=resamples)
    return int(resamples)


def sd(values: NDArray[np.float64]) -> float:
    """Sample standard deviation (ddof 1), 0 when the values are equal up to rounding.

    ``[0.1, 0.1, 0.1]`` has a computed mean that differs from 0.1 in the last bit, so numpy's
    standard deviation is about 1e-17 instead of 0; a t statistic divided by it would be huge
    instead of undefined. Values whose spread is within rounding of their size count as equal.
    """
    if values.size < 2:
        return 0.0
    scale = float(np.abs(values).max())
    if scale == 0.0:
        return 0.0
    # squared deviations of values below 1e-162 underflow to 0 (t = inf, p = 0), above 1e154
    # they overflow: computed near 1 instead
    unit = unit_scale(scale)
    spread = float((values * unit).std(ddof=1)) / unit
    return 0.0 if spread <= TOLERANCE * scale else spread


def unit_scale(size: float) -> float:
    """The power of two that brings ``size`` (> 0, finite) into [0.5, 1), or as near as 2**1022
    brings a subnormal size: multiplying by it is exact, so what is computed on scaled values
    differs from the unscaled computation only where that over- or underflowed."""
    return math.ldexp(1.0, min(1022, -math.frexp(size)[1]))


def equal_up_to_rounding(x: float, y: float) -> bool:
    """Whether two per-query scores are a tie: equal within ``TOLERANCE * (|x| + |y|)``, the
    rule every test, interval and W/T/L count applies (:func:`clean_differences`)."""
    return abs(x - y) <= TOLERANCE * (abs(x) + abs(y))


def clean_differences(
    x: NDArray[np.float64], y: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``x - y`` without its rounding noise, and the tolerance of each column's sum.

    ``x`` and ``y`` are per-query scores (1-D, or queries × pairs). Scores equal in exact
    arithmetic can differ in their last bits (0.1 + 0.2 and 0.3; P@10 differences 0.3 - 0.2 =
    0.09999999999999998 and 0.1 - 0 = 0.1), by at most a few ``eps`` times the scores' size.
    The rounding tolerance of query i is ``TOLERANCE * (|x_i| + |y_i|)``:

    - a difference within it is a tie and becomes exactly 0;
    - differences whose sizes are within it of each other (the larger of their tolerances) are
      tied: they get the size of the smallest of them, keeping their signs, so that ranks,
      ties and the choice of exact or approximate distributions see what exact arithmetic
      would.

    The second value is ``TOLERANCE * sum(|x_i| + |y_i|)`` per column: a sum of differences
    (or of sign-flipped differences) within it of another counts as equal to it, and a sum
    within it of 0 is 0, so is the mean difference (:func:`zero_sum`).
    """
    d = x - y
    size = np.abs(x) + np.abs(y)
    tolerance = TOLERANCE * size
    d[np.abs(d) <= tolerance] = 0.0
    columns = d.reshape(d.shape[0], -1)
    scales = tolerance.reshape(d.shape[0], -1)
    for j in range(columns.shape[1]):
        _merge_near_ties(columns[:, j], scales[:, j])
    return d, TOLERANCE * size.sum(axis=0)


def _merge_near_ties(d: NDArray[np.float64], tolerance: NDArray[np.float64]) -> None:
    """Give sizes ``|d_i|`` within rounding of each other one size (in place)."""
    magnitude = np.abs(d)
    order = np.flatnonzero(magnitude)  # a tie with 0 is decided by the query's own scores
    order = order[np.argsort(magnitude[order], kind="stable")]
    ranked = magnitude[order]
    if ranked.size < 2:
        return
    near = np.diff(ranked) <= np.maximum(tolerance[order][1:], tolerance[order][:-1])
    if not near.any():
        return
    # each run of near-equal neighbours takes the size of its first (smallest) member
    starts = np.concatenate(([True], ~near))
    first = np.maximum.accumulate(np.where(starts, np.arange(ranked.size), 0))
    d[order] = np.copysign(ranked[first], d[order])


def zero_sum(total: float, tolerance: float) -> bool:
    """Whether a sum of differences is 0 up to rounding (``tolerance`` from
    :func:`clean_differences`)."""
    return abs(total) <= tolerance


def safe_ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator`` with 0/0 = 0 and x/0 = ±inf (never NaN)."""
    if denominator == 0.0:
        if numerator == 0.0:
            return 0.0
        return math.copysign(math.inf, numerator)
    return numerator / denominator


def two_sided_t_p(t: float, df: float) -> float:
    """Two-sided p of a t statistic (1 for t = 0, 0 for an infinite t)."""
    from scipy import stats

    if math.isinf(t):
        return 0.0
    return float(min(1.0, 2.0 * stats.t.sf(abs(t), df)))
