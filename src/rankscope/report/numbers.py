"""How every report shows a number: fixed decimals, p-values, intervals, and the marks."""

from __future__ import annotations

import math

from rankscope.stats.intervals import Interval

#: significantly better / worse than the baseline (or the best, the fastest)
BETTER = "▲"
WORSE = "▼"
#: a configuration on the Pareto front (quality and latency, within noise)
FRONT_MARK = "◆"


def fmt_value(value: float | None, digits: int = 4, signed: bool = False, none: str = "—") -> str:
    """A number as tables show it: fixed decimals, ``+inf``/``-inf``, ``none`` for none (and
    for NaN, what JSON stores as null)."""
    if value is None or math.isnan(value):
        return none
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    if round(value, digits) == 0:
        value = 0.0  # no "-0.0000"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def fmt_p(p: float | None, none: str = "—") -> str:
    """A p-value: 4 decimals, ``<0.0001`` below that, ``none`` for none (and NaN)."""
    if p is None or math.isnan(p):
        return none
    return "<0.0001" if p < 0.00005 else f"{p:.4f}"


def fmt_interval(interval: Interval | None, signed: bool = False) -> str:
    if interval is None:
        return "—"
    return f"[{fmt_value(interval.low, signed=signed)}, {fmt_value(interval.high, signed=signed)}]"


__all__ = ["BETTER", "FRONT_MARK", "WORSE", "fmt_interval", "fmt_p", "fmt_value"]
