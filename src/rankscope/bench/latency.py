"""Latency from repeated measurements: per-query medians, their percentiles, and the spread.

Each query runs once per timed pass (``repeats``). A query's latency is the median of its
passes, which discards a pass disturbed by something else on the machine; the percentiles
(p50, p95, p99) are over those per-query medians. The spread says how stable the measurement
was: the p50 over the queries computed separately for each pass (``p50_by_pass_ms``) and the
interquartile range of those values (``p50_iqr_ms``; ``None`` with fewer than two passes).
Percentiles interpolate linearly between values (numpy's default).

A query without search text (:func:`is_empty_query`) is answered without searching, in
microseconds: counted apart (``empty_queries``), it stays out of the mean and percentiles,
which it would pull down.

Compared per query (:mod:`rankscope.bench.statistics`), latency is :data:`LATENCY_QUANTITY`, a
quantity where lower is better; :func:`fmt_ms` is how tables and reasons show milliseconds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from rankscope.engines.base import Query
from rankscope.stats.quantity import Quantity

#: the per-query quantity compared for latency, as ``rankscope compare OUT_DIR -m`` names it
LATENCY = "latency_ms"
#: each query's latency (the median of its timed passes), in ms: lower is better
LATENCY_QUANTITY = Quantity(LATENCY, higher_is_better=False)
LATENCY_ALIASES = frozenset({"latency", LATENCY})
LATENCY_LABEL = "latency ms"


def is_latency(measure: str) -> bool:
    """Whether ``measure`` (as ``rankscope compare OUT_DIR -m`` takes it) names latency."""
    return measure in LATENCY_ALIASES


def fmt_ms(value: float | None, signed: bool = False) -> str:
    """Milliseconds as tables and reasons show them: 3 decimals, or 2 significant digits below
    0.01 ms (fast engines differ by microseconds), ``n/a`` for none."""
    if value is None or not math.isfinite(value):
        return "n/a"
    sign = "+" if signed else ""
    if value == 0 or abs(value) >= 0.01:
        return f"{value:{sign}.3f}"
    return f"{value:{sign}.1e}"


class LatencyStats(BaseModel):
    """Milliseconds; ``None`` when there is no measurement."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    num_queries: int
    repeats: int
    mean_ms: float | None
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None
    min_ms: float | None
    max_ms: float | None
    p50_by_pass_ms: list[float]
    p50_iqr_ms: float | None
    #: queries without search text, timed but left out of the figures above
    empty_queries: int = 0


def is_empty_query(query: Query) -> bool:
    """A query with nothing to search for: blank text and no boolean terms (engines answer
    it without searching)."""
    return not query.text.strip() and not (query.must or query.should or query.must_not)


def query_latency_ms(samples_s: Sequence[float]) -> float | None:
    """One query's latency: the median of its timed passes, in milliseconds."""
    return float(np.median(samples_s)) * 1000.0 if len(samples_s) else None


def latency_stats(per_query_s: Sequence[Sequence[float]], *, empty: int = 0) -> LatencyStats:
    """Summarise latency samples in seconds, one sequence (one sample per pass) per query;
    ``empty``: how many queries without search text were left out of ``per_query_s``."""
    measured = [s for s in per_query_s if len(s)]
    medians = np.asarray([np.median(s) for s in measured], dtype=np.float64) * 1000.0
    repeats = max((len(s) for s in measured), default=0)
    if medians.size == 0:
        return LatencyStats(
            num_queries=0,
            repeats=0,
            mean_ms=None,
            p50_ms=None,
            p95_ms=None,
            p99_ms=None,
            min_ms=None,
            max_ms=None,
            p50_by_pass_ms=[],
            p50_iqr_ms=None,
            empty_queries=empty,
        )
    p50, p95, p99 = np.percentile(medians, [50, 95, 99]).tolist()
    by_pass = [
        float(np.percentile([s[r] for s in measured if len(s) > r], 50)) * 1000.0
        for r in range(repeats)
    ]
    iqr = None
    if len(by_pass) >= 2:
        q1, q3 = np.percentile(by_pass, [25, 75]).tolist()
        iqr = float(q3 - q1)
    return LatencyStats(
        num_queries=int(medians.size),
        repeats=repeats,
        mean_ms=float(medians.mean()),
        p50_ms=float(p50),
        p95_ms=float(p95),
        p99_ms=float(p99),
        min_ms=float(medians.min()),
        max_ms=float(medians.max()),
        p50_by_pass_ms=by_pass,
        p50_iqr_ms=iqr,
        empty_queries=empty,
    )
