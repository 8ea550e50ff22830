"""The report's tables as cells, shared by the HTML, Markdown and LaTeX renderers.

A :class:`Cell` holds the text shown and, for a number, the exact value from ``results.json``
and the key it came from (``mean``, ``delta``, ``latency.p_value``...), so the HTML can
carry the full-precision value beside the rounded text.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from rankscope.bench.evaluation import measure_label
from rankscope.bench.latency import fmt_ms
from rankscope.bench.results import Practical
from rankscope.report.content import ReportContent
from rankscope.report.numbers import BETTER, FRONT_MARK, WORSE, fmt_p, fmt_value
from rankscope.stats.comparison import SystemRow
from rankscope.stats.intervals import Interval


@dataclass(frozen=True)
class Cell:
    text: str
    value: float | None = None
    key: str | None = None
    #: "worse" / "better" (a significant difference) or "best" (the baseline)
    mark: str | None = None


@dataclass(frozen=True)
class Table:
    """A header and labelled rows of cells. ``best`` says which numbers are highlighted: the
    highest of each ``column``, or of each ``row``; ``row_kind`` what a row is (``config``,
    ``category``)."""

    header: list[str]
    rows: list[tuple[str, list[Cell]]]
    best: Literal["column", "row"] | None = None
    row_kind: str = "config"

    def is_top(self, row: int, column: int) -> bool:
        """Whether cell ``column`` of row ``row`` holds the highest value it is ranked with."""
        value = self.rows[row][1][column].value
        if self.best is None or value is None:
            return False
        if self.best == "column":
            values = [cells[column].value for _, cells in self.rows]
        else:
            values = [c.value for c in self.rows[row][1]]
        found = [v for v in values if v is not None]
        return bool(found) and value == max(found)


def _number(value: float | None, key: str, digits: int = 4, signed: bool = False) -> Cell:
    return Cell(fmt_value(value, digits, signed=signed), value, key)


def _interval(interval: Interval | None, key: str, digits: int = 4, signed: bool = False) -> Cell:
    if interval is None or not (math.isfinite(interval.low) and math.isfinite(interval.high)):
        return Cell("—")
    low, high = interval.low, interval.high
    text = f"[{fmt_value(low, digits, signed)}, {fmt_value(high, digits, signed)}]"
    return Cell(text, None, key)


def _delta(
    row: SystemRow | None,
    baseline: str,
    word: str,
    key: str,
    ms: bool,
    min_effect: float = 0.0,
) -> Cell:
    """The difference from the baseline, marked when significant and at least ``min_effect``
    (in absolute value: a practical threshold)."""
    if row is None:
        return Cell("—")
    if row.system == baseline:
        return Cell(word, mark="best")
    large = row.delta is not None and abs(row.delta) >= min_effect
    mark = row.direction if row.significant and large else None
    symbol = {"worse": f" {WORSE}", "better": f" {BETTER}"}.get(mark or "", "")
    text = fmt_ms(row.delta, signed=True) if ms else fmt_value(row.delta, signed=True)
    return Cell(text + symbol, row.delta, key, mark)


def _p(row: SystemRow | None, baseline: str, key: str) -> Cell:
    """The corrected p-value (the one that decides significance)."""
    if row is None or row.system == baseline:
        return Cell("")
    return Cell(fmt_p(row.p_adjusted), row.p_adjusted, key)


def latency_min_effect(content: ReportContent, name: str) -> float:
    """The smallest latency difference (ms) from the fastest configuration marked for the
    configuration ``name``: the suite's practical threshold, the Pareto front's own rule
    (:meth:`~rankscope.bench.results.Practical.latency_threshold_ms` of the slower p50)."""
    fastest = None if content.latency is None else content.latency.baseline
    p50 = {r.name: r.p50_ms for r in content.rows if r.p50_ms is not None}
    slower = max((p50[n] for n in (name, fastest) if n in p50), default=0.0)
    return Practical.of(content.result.settings).latency_threshold_ms(slower)


def comparison_table(content: ReportContent) -> Table:
    """Per configuration: the headline mean and interval, the difference from the best with
    its interval and p, the p50 latency and the per-query latency difference from the fastest
    with its p, the index time, and whether it is on the Pareto front."""
    level = f"{content.statistics.level * 100:g}%"
    best = content.baseline or ""
    fastest = "" if content.latency is None else content.latency.baseline
    header = [
        "configuration",
        content.label,
        f"{level} CI",
        "Δ vs best",
        f"{level} CI of Δ",
        "p",
        "p50 ms",
        "Δ latency ms",
        "p (latency)",
        "index s",
        "Pareto",
    ]
    rows = []
    for r in content.rows:
        q, t = r.quality, r.latency
        cells = [
            _number(None if q is None else q.mean, "mean"),
            _interval(None if q is None else q.mean_interval, "mean_ci"),
            _delta(q, best, "best", "delta", ms=False),
            _interval(
                None if q is None or q.system == best else q.delta_interval, "delta_ci", signed=True
            ),
            _p(q, best, "p_value"),
            _number(r.p50_ms, "p50_ms", 3),
            _delta(
                t,
                fastest,
                "fastest",
                "latency.delta",
                ms=True,
                min_effect=latency_min_effect(content, r.name),
            ),
            _p(t, fastest, "latency.p_value"),
            _number(r.index_s, "index_s", 2),
            Cell(FRONT_MARK if r.on_front else "", key="pareto"),
        ]
        rows.append((r.name, cells))
    return Table(header, rows)


def category_table(content: ReportContent) -> Table | None:
    """The headline per category (rows, with their query counts) and configuration
    (columns); the best configuration of each category highlighted."""
    if not content.categories:
        return None
    header = ["category (queries)"] + [r.name for r in content.rows]
    rows = [
        (
            f"{c.name} ({c.num_queries})",
            [_number(c.means.get(r.name), f"category.{c.name}.{r.name}") for r in content.rows],
        )
        for c in content.categories
    ]
    return Table(header, rows, best="row", row_kind="category")


def measures_table(content: ReportContent) -> Table:
    """Every reported measure's mean over the view, per configuration, and for vector searches
    ``ann_recall@k`` (against exact search over the same vectors)."""
    ann = sorted(
        {k for r in content.rows for k in r.ann_recall}, key=lambda k: int(k.rsplit("@", 1)[1])
    )
    header = ["configuration"] + [measure_label(m) for m in content.measures] + ann
    rows = [
        (
            r.name,
            [_number(r.summary.get(m), f"summary.{m}") for m in content.measures]
            + [_number(r.ann_recall.get(k), f"ann_recall.{k}") for k in ann],
        )
        for r in content.rows
    ]
    return Table(header, rows, best="column")


__all__ = [
    "Cell",
    "Table",
    "category_table",
    "comparison_table",
    "measures_table",
]
