"""Latency statistics over all measured executions of a configuration's queries."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

import numpy as np


@dataclass(frozen=True)
class LatencyStats:
    """Milliseconds; percentiles use linear interpolation between samples (numpy's default)."""

    count: int
    mean_ms: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    min_ms: float
    max_ms: float

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)


def latency_stats(samples_s: Iterable[float]) -> LatencyStats:
    """Summarise latency samples given in seconds."""
    values = np.asarray(list(samples_s), dtype=np.float64) * 1000.0
    if values.size == 0:
        nan = float("nan")
        return LatencyStats(0, nan, nan, nan, nan, nan, nan)
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
