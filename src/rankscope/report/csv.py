"""CSV: every number at full precision, for a spreadsheet or a script.

:func:`to_csv` writes a :class:`~rankscope.stats.Comparison` (one row per measure and system,
the columns of :data:`CSV_COLUMNS`) or a benchmark's :class:`~rankscope.bench.BenchmarkResult`
(one row per configuration that ran, every column of its table).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, overload

from rankscope.bench.results import BenchmarkResult, ConfigResult, ViewName
from rankscope.report import bench
from rankscope.util.csvcells import Cell, csv_table

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.stats import Comparison


@overload
def to_csv(value: Comparison) -> str: ...
@overload
def to_csv(value: BenchmarkResult, *, view: ViewName | None = None) -> str: ...
def to_csv(value: Comparison | BenchmarkResult, *, view: ViewName | None = None) -> str:
    """``value`` as CSV: a comparison, or a benchmark's table over a ``view``."""
    if isinstance(value, BenchmarkResult):
        return _benchmark(value, view=view)
    return _comparison(value)


# ----------------------------------------------------------------------------- a comparison
CSV_COLUMNS = [
    "measure",
    "system",
    "baseline",
    "is_baseline",
    "queries",
    "mean",
    "mean_low",
    "mean_high",
    "delta",
    "delta_low",
    "delta_high",
    "effect_size",
    "statistic",
    "p_value",
    "p_adjusted",
    "correction",
    "significant",
    "direction",
    "wins",
    "ties",
    "losses",
    "filled",
    "dropped",
    "sd_difference",
    "queries_needed",
    "min_detectable_delta",
]


def _csv_number(value: float | int | None) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)


def _comparison(comparison: Comparison) -> str:
    """One row per measure and system, full precision; empty cells where nothing applies."""
    c = comparison
    rows: list[list[Cell]] = []
    filled = dict(zip(c.systems, c.filled, strict=True))
    dropped = dict(zip(c.systems, c.dropped, strict=True))
    for m in c.measures:
        for r in m.rows:
            rows.append(
                [
                    m.measure,
                    r.system,
                    c.baseline,
                    str(r.is_baseline).lower(),
                    c.queries,
                    _csv_number(r.mean),
                    _csv_number(r.mean_interval.low),
                    _csv_number(r.mean_interval.high),
                    _csv_number(r.delta),
                    _csv_number(r.delta_interval.low if r.delta_interval else None),
                    _csv_number(r.delta_interval.high if r.delta_interval else None),
                    _csv_number(r.effect_size),
                    _csv_number(r.statistic),
                    _csv_number(r.p_value),
                    _csv_number(r.p_adjusted),
                    "" if r.is_baseline else c.correction,
                    "" if r.is_baseline else str(r.significant).lower(),
                    r.direction or "",
                    _csv_number(r.wins),
                    _csv_number(r.ties),
                    _csv_number(r.losses),
                    filled[r.system],
                    dropped[r.system],
                    _csv_number(r.plan.sd_difference if r.plan else None),
                    _csv_number(r.plan.queries_needed if r.plan else None),
                    _csv_number(r.plan.min_detectable_delta if r.plan else None),
                ]
            )
    return csv_table(CSV_COLUMNS, rows)


# ----------------------------------------------------------------------------- a benchmark
def _benchmark(result: BenchmarkResult, *, view: ViewName | None) -> str:
    """The comparison table as CSV: one row per configuration that ran, the table's columns (every
    one, none left out for width) at full precision (``repr`` of the float; empty where the
    table shows ``-``); the interval as two columns, ``95% CI low`` and ``95% CI high``; ``Δ
    best`` is empty on the best configuration's row."""
    chosen = view or result.default_view
    cols = bench.columns(result, chosen)
    cells: list[tuple[str, Callable[[ConfigResult], float | None]]] = []
    for col in cols:
        cells.extend(col.parts or ((col.header, col.value),))
    rows: list[list[Cell]] = []
    for config in result.successful:
        values = (value(config) for _, value in cells)
        rows.append([config.name, *(None if v is None else float(v) for v in values)])
    return csv_table(["configuration", *(header for header, _ in cells)], rows)


__all__ = ["CSV_COLUMNS", "to_csv"]
