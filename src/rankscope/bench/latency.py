"""Latency statistics over all measured executions of a configuration's queries."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from pydantic import BaseModel, ConfigDict


class LatencyStats(BaseModel):
    """Milliseconds; percentiles use linear interpolation between samples (numpy's default).

    Values are ``None`` when there is no sample.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    count: int
    mean_ms: float | None
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None
    min_ms: float | None
    max_ms: float | None


def latency_stats(samples_s: Iterable[float]) -> LatencyStats:
    """Summarise latency samples given in seconds."""
    values = np.asarray(list(samples_s), dtype=np.float64) * 1000.0
    if values.size == 0:
        return LatencyStats(
            count=0, mean_ms=None, p50_ms=None, p95_ms=None, p99_ms=None, min_ms=None, max_ms=None
        )
    p50, p95, p99 = np.percentile(values, [50, 95, 99]).tolist()
    return LatencyStats(
        count=int(values.size),
        mean_ms=float(values.mean()),
        p50_ms=float(p50),
        p95_ms=float(p95),
        p99_ms=float(p99),
        min_ms=float(values.min()),
        max_ms=float(values.max()),
    )
