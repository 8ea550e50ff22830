"""The Pareto front of quality against latency, within noise.

A configuration **beats** another when it is at least as good on both the headline measure and
latency (not significantly worse on either) and significantly better on at least one. The
front is the configurations no other beats. A configuration that is faster by a margin the
timings cannot tell from noise, at the same quality within noise, does not push another off
the front; one that is significantly faster at a quality within noise does.

"Significantly" is the benchmark's own machinery (:mod:`rankscope.bench.statistics`), over every
pair of configurations: the headline per query by the randomised Tukey HSD (family-wise over
all pairs, the same seeded draws as the table's p-values), each query's latency (the median of
its timed passes) by the paired randomization test, Holm-corrected over all pairs; the
direction of a significant difference is the sign of the mean per-query difference. Latency is
compared over the queries every configuration ran, with at least ``2 × pairs / alpha`` random
sign vectors (10,000 up to 17 configurations), so that a pair faster on every draw
(p = 1 / (B + 1)) stays significant after Holm's correction over all pairs.

Where no test can be made (one configuration, fewer than 2 queries), nothing is significant, so
nothing beats anything and every configuration is on the front; the notes say why. "Beats"
within noise is not transitive, so in principle a cycle could leave every configuration beaten:
the front is then the classic one, by means (no other at least as good on both means and better
on one), and a note says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from rankscope.bench.results import ALPHA, RESAMPLES, ParetoFront


def _significance(
    x: NDArray[np.float64],
    test: Literal["rtukey", "randomization"],
    seed: int,
    resamples: int,
    alpha: float,
) -> NDArray[np.int8]:
    """``s[i, j]``: +1 when configuration i is significantly higher than j, -1 when
    significantly lower, 0 within noise."""
    from rankscope.stats import pairwise

    m = x.shape[0]
    out = np.zeros((m, m), dtype=np.int8)
    if m < 2 or x.shape[1] < 2:
        return out
    found = pairwise(x, test=test, correction="holm", seed=seed, resamples=resamples)
    for pair in found.pairs:
        if pair.p_adjusted <= alpha and pair.delta != 0:
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
    label: str = "quality",
    seed: int = 0,
    resamples: int = RESAMPLES,
    alpha: float = ALPHA,
) -> ParetoFront:
    """The front of ``names`` from their per-query headline values (``quality``,
    configurations × queries, higher is better) and per-query latencies (``latency_ms``, same
    shape, lower is better; NaN where a configuration did not run a query)."""
    q = np.asarray(quality, dtype=np.float64)
    t = np.asarray(latency_ms, dtype=np.float64)
    m = len(names)
    notes: list[str] = []
    if m == 0:
        return ParetoFront(configs=[], rule=_rule(label, 0, alpha, resamples))
    q_ok = q[:, np.isfinite(q).all(axis=0)] if q.size else q
    t_ok = t[:, np.isfinite(t).all(axis=0)] if t.size else t
    if m > 1 and q_ok.shape[1] < 2:
        notes.append(f"{label}: fewer than 2 queries with values, no difference tested")
    if m > 1 and t_ok.shape[1] < 2:
        notes.append("latency: fewer than 2 queries every configuration ran, none tested")
    better_q = _significance(q_ok, "rtukey", seed, resamples, alpha)
    # latency: lower is better, so a significantly lower latency is +1. Holm over all pairs
    # needs p <= alpha / pairs, below the 1 / (B + 1) floor of 10,000 draws from 142 pairs
    # (18 configurations) on: draw enough that the floor survives the correction
    draws = max(resamples, latency_draws(m, alpha))
    better_t = -_significance(t_ok, "randomization", seed, draws, alpha)
    beaten_by: dict[str, list[str]] = {}
    for i, name in enumerate(names):
        winners = [
            names[j]
            for j in range(m)
            if j != i
            and better_q[j, i] >= 0
            and better_t[j, i] >= 0
            and (better_q[j, i] > 0 or better_t[j, i] > 0)
        ]
        if winners:
            beaten_by[name] = winners
    front = [n for n in names if n not in beaten_by]
    if not front:
        means_q = [float(np.mean(row)) for row in q_ok] if q_ok.size else [0.0] * m
        means_t = [float(np.mean(row)) for row in t_ok] if t_ok.size else [0.0] * m
        front = classic_front(names, means_q, means_t)
        notes.append(
            "every configuration is beaten within noise by another (a cycle): the front shown "
            "is the classic one, by means"
        )
    rule = _rule(label, m, alpha, draws)
    return ParetoFront(configs=front, beaten_by=beaten_by, rule=rule, notes=notes)


def latency_draws(configurations: int, alpha: float = ALPHA) -> int:
    """Random sign vectors that let a pair whose every draw falls short of its observed
    difference (p = 1 / (B + 1)) stay significant after Holm's correction over all pairs:
    ``B = ceil(2 * pairs / alpha)``."""
    pairs = configurations * (configurations - 1) // 2
    return math.ceil(2 * pairs / alpha)


def _rule(label: str, m: int, alpha: float, draws: int) -> str:
    pairs = m * (m - 1) // 2
    return (
        f"a configuration beats another when it is not significantly worse on {label} or on "
        f"per-query latency and significantly better on at least one; the front is those no "
        f"other beats ({label}: randomised Tukey HSD; latency: paired randomization test, "
        f"B = {draws:,}, Holm-corrected; over all {pairs} pair{'s' if pairs != 1 else ''}, "
        f"alpha {alpha:g})"
    )


__all__ = ["classic_front", "pareto_front"]
