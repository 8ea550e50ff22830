"""What a benchmark report shows, gathered once from the typed results: every renderer (HTML,
Markdown, LaTeX) and every figure reads :class:`ReportContent`, so they all print the same
numbers, and those numbers are the ones in ``results.json``.

Nothing is measured or tested again here: intervals, differences and p-values come from
``results.json``'s ``statistics`` (computed by :func:`rankscope.bench.assemble.with_statistics`
for results written before schema version 3); per-query differences are the stored per-query
values of the view, minus the best configuration's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rankscope.bench.evaluation import measure_label
from rankscope.bench.pareto import classic_front
from rankscope.bench.results import (
    BenchmarkResult,
    ConfigResult,
    ConfigurationComparison,
    ViewName,
    ViewStatistics,
)
from rankscope.errors import InputError
from rankscope.report.bench import RECOMMENDATION_TITLES, notes, title
from rankscope.stats.comparison import SystemRow

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.diff.core import RunDiff


@dataclass(frozen=True)
class Row:
    """One successful configuration: its headline comparison (``quality``), its latency
    comparison (``latency``), and the table's other figures."""

    name: str
    quality: SystemRow | None
    latency: SystemRow | None
    p50_ms: float | None
    p95_ms: float | None
    p50_by_pass_ms: list[float]
    index_s: float | None
    summary: dict[str, float | None]
    on_front: bool = False
    #: vector searches: ``ann_recall@k`` means over the view (empty for other engines)
    ann_recall: dict[str, float | None] = field(default_factory=dict)


@dataclass(frozen=True)
class Differences:
    """Per-query differences of one configuration from the best, over the view's queries
    (equal up to rounding is 0, as the statistics count it)."""

    name: str
    query_ids: list[str]
    values: NDArray[np.float64]
    higher_is_better: bool = True

    def better(self) -> NDArray[np.bool_]:
        """Queries where the configuration does better than the best."""
        return self.values > 0 if self.higher_is_better else self.values < 0

    @property
    def wins_ties_losses(self) -> tuple[int, int, int]:
        d = self.values
        wins = int(self.better().sum())
        ties = int((d == 0).sum())
        return wins, ties, int(d.size) - wins - ties


@dataclass(frozen=True)
class Category:
    name: str
    num_queries: int
    means: dict[str, float | None]


@dataclass(frozen=True)
class ReportContent:
    result: BenchmarkResult
    view: ViewName
    title: str
    num_queries: int
    headline: str
    label: str
    statistics: ViewStatistics
    rows: list[Row]
    differences: list[Differences]
    categories: list[Category]
    notes: list[str]
    recommendations: list[tuple[str, str, str]]
    failures: list[tuple[str, str]]
    measures: list[str] = field(default_factory=list)
    #: per configuration, its per-query diff from the best (from the run files: set by
    #: :func:`rankscope.report.write.write_report` when it reads an output folder)
    query_diffs: list[RunDiff] = field(default_factory=list)
    query_diff_notes: list[str] = field(default_factory=list)

    @property
    def quality(self) -> ConfigurationComparison | None:
        return self.statistics.quality

    @property
    def latency(self) -> ConfigurationComparison | None:
        return self.statistics.latency

    @property
    def baseline(self) -> str | None:
        return None if self.quality is None else self.quality.baseline

    @property
    def compared(self) -> bool:
        return self.quality is not None and self.quality.compared

    def test_text(self) -> str:
        """How the differences were tested, in one sentence."""
        s = self.statistics
        q = self.quality
        if q is None or q.comparison is None:
            return "No comparison: " + ("; ".join(s.notes) or "one configuration")
        text = (
            f"{q.label}: {q.test_name} over the configurations ({q.family}), B = "
            f"{s.resamples:,} draws, seed {s.seed}, alpha {s.alpha:g}; intervals at "
            f"{s.level * 100:g}% (mean: t interval; difference: simultaneous). n = "
            f"{q.num_queries} queries: {q.comparison.query_set}."
        )
        t = self.latency
        if t is not None and t.comparison is not None:
            draws = "exact" if t.comparison.exact else f"B = {s.resamples:,} draws, seed {s.seed}"
            text += (
                f" Latency: each query's median over the timed passes; Δ latency is the mean "
                f"per-query difference from the fastest (lowest p50), {t.test_name} ({draws}), "
                f"{t.family}, over {t.num_queries} queries."
            )
        return text

    def other_notes(self) -> list[str]:
        """The table's notes, less the failures and the statistics' own description (both
        shown elsewhere in a report)."""
        level = f"{self.statistics.level * 100:g}% CI:"
        return [n for n in self.notes if not n.startswith(("FAILED ", level))]

    def command(self, folder: str = "<output folder>") -> str | None:
        if self.quality is None or not self.quality.compared:
            return None
        return f"rankscope compare {folder} {self.quality.command}"


def build(result: BenchmarkResult, view: ViewName | None = None) -> ReportContent:
    """Gather a report's content from ``result`` over one view (default: the table's)."""
    from rankscope.bench.assemble import with_statistics

    chosen: ViewName = view or result.default_view
    if chosen not in result.query_sets:
        raise InputError(f"no view {chosen!r} in these results", hint="use answered or all")
    if not result.statistics.get(chosen):
        result = with_statistics(result)
    stats = result.statistics[chosen]
    ok = result.successful
    rows = [_row(result, c, stats, chosen) for c in ok]
    rows = _mark_front(rows, stats)
    return ReportContent(
        result=result,
        view=chosen,
        title=title(result, chosen),
        num_queries=len(result.query_sets[chosen].query_ids),
        headline=result.headline,
        label=measure_label(result.headline),
        statistics=stats,
        rows=rows,
        differences=_differences(result, stats, chosen),
        categories=_categories(result, ok, chosen),
        notes=[n.text for n in notes(result, chosen)],
        recommendations=[
            (RECOMMENDATION_TITLES.get(key, key), rec.config, rec.reason)
            for key, rec in result.recommended(chosen).items()
        ],
        failures=[(f.name, f.error or "") for f in result.failures],
        measures=list(result.measures),
    )


def _row(
    result: BenchmarkResult, config: ConfigResult, stats: ViewStatistics, view: ViewName
) -> Row:
    scores = config.view(view)
    return Row(
        name=config.name,
        quality=_find(stats.quality, config.name),
        latency=_find(stats.latency, config.name),
        p50_ms=scores.latency.p50_ms,
        p95_ms=scores.latency.p95_ms,
        p50_by_pass_ms=list(scores.latency.p50_by_pass_ms),
        index_s=config.index_time_s,
        summary=dict(scores.summary),
        ann_recall=dict(scores.ann_recall),
    )


def _find(comparison: ConfigurationComparison | None, name: str) -> SystemRow | None:
    if comparison is None:
        return None
    try:
        return comparison.row(name)
    except KeyError:
        return None


def pareto_front(points: list[tuple[str, float, float]]) -> list[str]:
    """Names of the points (name, quality, latency) that no other point beats on both means
    (:func:`rankscope.bench.pareto.classic_front`: the front without noise, for results that
    do not store the front within noise)."""
    return classic_front([p[0] for p in points], [p[1] for p in points], [p[2] for p in points])


def _mark_front(rows: list[Row], stats: ViewStatistics) -> list[Row]:
    """The rows on the view's Pareto front (within noise), as results.json stores it."""
    if stats.pareto is not None:
        front = set(stats.pareto.configs)
        return [Row(**{**r.__dict__, "on_front": r.name in front}) for r in rows]
    points = [
        (r.name, r.quality.mean, r.p50_ms)
        for r in rows
        if r.quality is not None and r.p50_ms is not None and math.isfinite(r.p50_ms)
    ]
    front = set(pareto_front(points))
    return [Row(**{**r.__dict__, "on_front": r.name in front}) for r in rows]


def _differences(
    result: BenchmarkResult, stats: ViewStatistics, view: ViewName
) -> list[Differences]:
    quality = stats.quality
    if quality is None or not quality.compared:
        return []
    from rankscope.stats.paired import differences

    ids, values = result.per_query_values(quality.measure, view)
    base = values[quality.baseline]
    return [
        Differences(name, list(ids), differences(values[name], base)[0], quality.higher_is_better)
        for name in values
        if name != quality.baseline
    ]


def _categories(result: BenchmarkResult, ok: list[ConfigResult], view: ViewName) -> list[Category]:
    out = []
    for category in result.suite.categories:
        found = [c.view(view).per_category.get(category) for c in ok]
        n = next((f.num_queries for f in found if f is not None), 0)
        means = {
            c.name: (None if f is None else f.means.get(result.headline))
            for c, f in zip(ok, found, strict=True)
        }
        out.append(Category(category, n, means))
    return out


__all__ = ["Category", "Differences", "ReportContent", "Row", "build", "pareto_front"]
