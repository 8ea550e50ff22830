"""Markdown, for a README, an issue or a paper's supplement.

:func:`to_markdown` writes a :class:`~rankscope.stats.Comparison` (the header as a list, a table
per measure, its pairs and planning figures, the warnings), a benchmark's
:class:`~rankscope.bench.BenchmarkResult` (its comparison table, the best value of each column
in bold, the notes and the recommendations) or a benchmark report's
:class:`~rankscope.report.content.ReportContent` (the comparison table with intervals and
p-values, the per-category table, the recommendations and how everything was computed; the
figures are in the HTML report). Every table is written by one function, which escapes ``|``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, overload

from rankscope.bench.results import BenchmarkResult, ConfigResult, ViewName
from rankscope.report import bench, compare
from rankscope.report.content import ReportContent
from rankscope.report.tables import Table, category_table, comparison_table, measures_table
from rankscope.util.markup import markdown_table

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.stats import Comparison


@overload
def to_markdown(value: Comparison, *, plan: bool = False, delta: float | None = None) -> str: ...
@overload
def to_markdown(
    value: BenchmarkResult,
    *,
    by_category: bool = False,
    view: ViewName | None = None,
    folder: str | None = None,
) -> str: ...
@overload
def to_markdown(value: ReportContent, *, folder: str | None = None) -> str: ...
def to_markdown(
    value: Comparison | BenchmarkResult | ReportContent,
    *,
    plan: bool = False,
    delta: float | None = None,
    by_category: bool = False,
    view: ViewName | None = None,
    folder: str | None = None,
) -> str:
    """``value`` as Markdown: a comparison with its planning figures (``plan``, for ``delta``);
    a benchmark's table over a ``view`` (a table per category with ``by_category``); a report.
    ``folder`` is where a benchmark's results are, for the commands the notes give."""
    if isinstance(value, ReportContent):
        return _report(value, folder or "<output folder>")
    if isinstance(value, BenchmarkResult):
        return _benchmark(value, by_category=by_category, view=view, folder=folder)
    return _comparison(value, plan=plan, delta=delta)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A table, its first column left-aligned and the others right-aligned."""
    return markdown_table(header, rows, "l" + "r" * (len(header) - 1))


# ----------------------------------------------------------------------------- a comparison
def _comparison(comparison: Comparison, *, plan: bool, delta: float | None) -> str:
    c = comparison
    out = [f"- {line}" for line in compare.header_lines(c)] + [""]
    for m in c.measures:
        rows = [texts for texts, _ in compare.cells(c, m)]
        out += [f"**{m.measure}**", "", *_table(compare.columns(c), rows), ""]
        if len(c.systems) > 2:
            out += [compare.anova_line(m) + ".", ""]
        found = compare.pair_rows(c, m)
        if found and len(c.systems) > 2:
            out += [f"{m.measure}, all pairs:", "", *_table(compare.pair_columns(c), found), ""]
        if plan:
            header = compare.plan_columns(c, compare.plan_delta_label(c, delta))
            out += [f"{m.measure}, planning (paired t):", "", *_table(header, compare.plan_rows(m))]
            out.append("")
    for w in c.warnings:
        out.append(f"> Warning: {w}")
    return "\n".join(out).rstrip() + "\n"


# ----------------------------------------------------------------------------- a benchmark
def _benchmark(
    result: BenchmarkResult, *, by_category: bool, view: ViewName | None, folder: str | None
) -> str:
    """The comparison table as Markdown; the best value of each column in bold."""
    chosen = view or result.default_view
    ok = result.successful
    suite = result.suite
    parts = [f"## {suite.name}\n"]
    if suite.description:
        parts.append(f"{suite.description}\n")
    parts.append(f"{bench.title(result, chosen)}.\n")
    if ok:
        parts.append(_columns_table(ok, bench.columns(result, chosen)))
    if by_category and ok and not suite.categories:
        parts.append(f"\n{bench.NO_CATEGORIES}.\n")
    if by_category and ok:
        for category in suite.categories:
            parts.append(f"\n### Category `{category}`\n")
            parts.append(_columns_table(ok, bench.category_columns(result, category, chosen)))
    lines = bench.notes(result, chosen, folder)
    if lines:
        parts.append("\n" + "".join(f"- {n.text}\n" for n in lines))
    picks = result.recommended(chosen).items()
    if picks:
        parts.append("\n### Recommendations\n")
        for key, rec in picks:
            heading = bench.RECOMMENDATION_TITLES.get(key, key)
            parts.append(f"- **{heading}**: `{rec.config}` ({rec.reason})\n")
    return "".join(parts)


def _columns_table(rows: Sequence[ConfigResult], cols: Sequence[bench.Column]) -> str:
    """One row per configuration; the best value of each column in bold."""
    bests = [bench.best(col, rows) for col in cols]
    body = []
    for row in rows:
        texts = []
        for col, top in zip(cols, bests, strict=True):
            value = col.value(row)
            text = col.render(row)
            texts.append(f"**{text}**" if value is not None and value == top else text)
        body.append([row.name, *texts])
    return "\n".join(_table(["configuration", *(c.header for c in cols)], body)) + "\n"


# ----------------------------------------------------------------------------- a report
def _table_of(table: Table) -> list[str]:
    """A report's table, its highest numbers (``table.best``) in bold."""
    rows = [
        [name, *(f"**{c.text}**" if table.is_top(r, i) else c.text for i, c in enumerate(cells))]
        for r, (name, cells) in enumerate(table.rows)
    ]
    return _table(table.header, rows)


def _report(content: ReportContent, folder: str) -> str:
    suite = content.result.suite
    out = [f"# {suite.name}: benchmark report", ""]
    if suite.description:
        out += [suite.description, ""]
    out += [
        f"rankscope {content.result.rankscope_version}, {content.result.timestamp}, view "
        f"`{content.view}`: {content.title}.",
        "",
        "## Comparison",
        "",
    ]
    if content.rows:
        out += [*_table_of(comparison_table(content)), ""]
    out += [
        content.test_text() + " ▼ significantly worse than the best (or the fastest), ▲ "
        "significantly better.",
        "",
    ]
    command = content.command(folder)
    if command:
        out += [f"Recompute: `{command}`", ""]
    if content.recommendations:
        out += ["## Recommendations", ""]
        out += [f"- **{t}**: `{c}` ({r})" for t, c, r in content.recommendations]
        out.append("")
    categories = category_table(content)
    if categories is not None:
        out += [f"## Per category: {content.label}", "", *_table_of(categories), ""]
    if content.rows:
        out += [f"## Every measure ({content.num_queries} queries)", ""]
        out += [*_table_of(measures_table(content)), ""]
    notes = [f"- FAILED {n}: {e}" for n, e in content.failures]
    notes += [f"- {n}" for n in content.other_notes()]
    if notes:
        out += ["## Notes", "", *notes, ""]
    return "\n".join(out).rstrip() + "\n"


__all__ = ["to_markdown"]
