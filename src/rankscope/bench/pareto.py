"""The Pareto front of quality against latency, within noise and practical thresholds.

One sentence (the table's legend says it): **a configuration is off the front when another is
at least as good on both the mean headline and p50 latency, and ahead on one of them by a
difference that is both significant and at least the practical threshold.**

- "At least as good" is by the point estimates the table shows: mean headline, p50 latency.
- "Ahead ... significant": the paired randomization test of that pair alone (the headline per
  query, or each query's latency: the median of its timed passes), two-sided, seeded, alpha
  0.05, its mean difference in the same direction. Not corrected over the other pairs: a
  correction over all pairs (Holm over 378 pairs of 28 configurations, or Tukey's HSD over 28
  systems) makes whether *a* beats *b* depend on unrelated configurations, so adding a
  configuration could change the front, and a real difference vanish among many.
- "Practical threshold" (:class:`~rankscope.bench.results.Practical`, a suite's ``settings``):
  a headline gap below ``min_effect`` (0.01), or a p50 gap below ``min_latency_ratio`` (5%) of
  the slower p50 or below ``min_latency_ms`` (0.05 ms), is a tie: never better, never faster.

What follows (the tests check each on random tables): the best-quality configuration (highest
mean) and the fastest (lowest p50) are on the front unless another is at least as good on both;
no member is significantly and practically worse on the headline than a configuration that is
no slower; adding a configuration worse on both than a member never removes it (each pair's
verdict is its own); and the front holds every configuration of the classic front by means
(:func:`classic_front`), plus those whose gap to the ones ahead of them is noise or too small
to matter. "Beats" implies weak dominance by the point estimates, so there is no cycle and the
front is never empty.

Where no test can be made (one configuration, fewer than 2 queries), nothing is significant, so
nothing beats anything and every configuration is on the front; the notes say why.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from rankscope.bench.results import ALPHA, RESAMPLES, ParetoFront, Practical

#: the definition :func:`pareto_front` implements (:attr:`ParetoFront.definition`)
FRONT_DEFINITION = 2


def _significance(
    x: NDArray[np.float64], seed: int, resamples: int, alpha: float
) -> NDArray[np.int8]:
    """``s[i, j]``: +1 when row i's mean is significantly higher than row j's (paired
    randomization test of the pair alone, uncorrected), -1 when lower, 0 within noise."""
    from rankscope.stats import pairwise

    m = x.shape[0]
    out = np.zeros((m, m), dtype=np.int8)
    if m < 2 or x.shape[1] < 2:
        return out
    found = pairwise(x, test="randomization", correction="none", seed=seed, resamples=resamples)
    for pair in found.pairs:
        if pair.p_value <= alpha and pair.delta != 0:
            sign = 1 if pair.delta > 0 else -1
            out[pair.first, pair.second] = sign
            out[pair.second, pair.first] = -sign
    return out


def classic_front(
    names: Sequence[str], quality: Sequence[float], latency: Sequence[float]
) -> list[str]:
    """The configurations no other is at least as good as on both means and better on one."""
    front = []
    for i, name in enumerate(names):
        dominated = any(
            quality[j] >= quality[i]
            and latency[j] <= latency[i]
            and (quality[j] > quality[i] or latency[j] < latency[i])
            for j in range(len(names))
            if j != i
        )
        if not dominated:
            front.append(name)
    return front


def pareto_front(
    names: Sequence[str],
    quality: NDArray[np.float64],
    latency_ms: NDArray[np.float64],
    *,
    p50_ms: Sequence[float | None] | None = None,
    label: str = "quality",
    practical: Practical | None = None,
    seed: int = 0,
    resamples: int = RESAMPLES,
    alpha: float = ALPHA,
) -> ParetoFront:
    """The front of ``names`` from their per-query headline values (``quality``,
    configurations × queries, higher is better) and per-query latencies (``latency_ms``, same
    shape, lower is better; NaN where a configuration did not run a query).

    ``p50_ms``: each configuration's p50 as the table shows it (default: the median of its
    per-query latencies over the queries every configuration ran); a configuration without one
    is never compared on latency, so it neither beats nor is beaten. ``practical``: the
    thresholds below which a difference is a tie (default :class:`Practical`)."""
    q = np.asarray(quality, dtype=np.float64)
    t = np.asarray(latency_ms, dtype=np.float64)
    m = len(names)
    practical = practical or Practical()
    notes: list[str] = []
    if m == 0:
        return ParetoFront(
            configs=[], rule=rule(label, practical, alpha, resamples), definition=FRONT_DEFINITION
        )
    # C order: each row's mean sums in the order the table's mean does (the same last digit)
    q_ok = np.ascontiguousarray(q[:, np.isfinite(q).all(axis=0)] if q.size else np.zeros((m, 0)))
    t_ok = np.ascontiguousarray(t[:, np.isfinite(t).all(axis=0)] if t.size else np.zeros((m, 0)))
    if m > 1 and q_ok.shape[1] < 2:
        notes.append(f"{label}: fewer than 2 queries with values, no difference tested")
    if m > 1 and t_ok.shape[1] < 2:
        notes.append("latency: fewer than 2 queries every configuration ran, none tested")
    mean_q = q_ok.mean(axis=1) if q_ok.shape[1] else np.full(m, math.nan)
    if p50_ms is None:
        p50 = np.median(t_ok, axis=1) if t_ok.shape[1] else np.full(m, math.nan)
    else:
        p50 = np.asarray([math.nan if v is None else v for v in p50_ms], dtype=np.float64)
    # latency: lower is better, so a significantly lower mean latency is +1
    higher_q = _significance(q_ok, seed, resamples, alpha)
    faster_t = -_significance(t_ok, seed, resamples, alpha)
    beaten_by: dict[str, list[str]] = {}
    for i, name in enumerate(names):
        winners = [
            names[j]
            for j in range(m)
            if j != i and _dominance(j, i, mean_q, p50, higher_q, faster_t, practical)
        ]
        if winners:
            beaten_by[name] = winners
    front = [n for n in names if n not in beaten_by]
    return ParetoFront(
        configs=front,
        beaten_by=beaten_by,
        rule=rule(label, practical, alpha, resamples),
        notes=notes,
        definition=FRONT_DEFINITION,
    )


def _dominance(
    j: int,
    i: int,
    mean_q: NDArray[np.float64],
    p50: NDArray[np.float64],
    higher_q: NDArray[np.int8],
    faster_t: NDArray[np.int8],
    practical: Practical,
) -> bool:
    """Whether configuration j beats configuration i (the module's one sentence)."""
    qj, qi, tj, ti = mean_q[j], mean_q[i], p50[j], p50[i]
    if not all(math.isfinite(v) for v in (qj, qi, tj, ti)):
        return False
    if qj < qi or tj > ti:  # not at least as good on both point estimates
        return False
    better = higher_q[j, i] > 0 and practical.quality_gap_counts(qj, qi)
    faster = faster_t[j, i] > 0 and practical.latency_gap_counts(tj, ti)
    return bool(better or faster)


def rule(label: str, practical: Practical, alpha: float, draws: int) -> str:
    """The front's definition in one sentence, with its settings (the table's legend)."""
    return (
        f"a configuration is off the front when another is at least as good on both mean "
        f"{label} and p50 latency and ahead on one by a difference that is significant (paired "
        f"randomization test of the pair, B = {draws:,}, alpha {alpha:g}, not corrected over "
        f"other pairs) and at least the practical threshold ({practical.describe(label)}); "
        f"smaller differences are ties"
    )


__all__ = ["FRONT_DEFINITION", "classic_front", "pareto_front", "rule"]
