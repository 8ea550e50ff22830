"""Render a benchmark comparison: a terminal table (rich), Markdown, or JSON.

One row per configuration, measures as columns, the best value of each column highlighted
(highest for quality, lowest for latency and index time), failed configurations listed with their
error, then the three recommendations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from rich.console import Console
from rich.table import Table
from rich.text import Text

from rankscope.bench.results import BenchmarkResult, ConfigResult, ViewName

Better = Literal["max", "min"]

_LABELS = {"ndcg": "nDCG", "map": "MAP", "mrr": "MRR", "P": "P", "recall": "R", "hit": "Hit"}
_RECOMMENDATION_TITLES = {
    "best_quality": "Best quality",
    "fastest": "Fastest",
    "best_balance": "Best balance",
}


@dataclass(frozen=True)
class Column:
    header: str
    value: Callable[[ConfigResult], float | None]
    better: Better
    digits: int


def measure_label(measure: str) -> str:
    name, _, k = measure.partition("@")
    label = _LABELS.get(name, name)
    return f"{label}@{k}" if k else label


def table_measures(result: BenchmarkResult) -> list[str]:
    """The measures shown as columns, for this result's cut-offs."""
    settings = result.settings
    ks = sorted(set(settings.k))
    ref = 10 if 10 in ks else ks[0]
    wanted = ["ndcg@10", "map", "mrr", f"P@{ref}"]
    wanted += [f"recall@{k}" for k in ks]
    wanted += [f"recall@{settings.max_k}", f"hit@{ref}"]
    return [m for m in dict.fromkeys(wanted) if m in result.measures]


def columns(result: BenchmarkResult, view: ViewName = "all") -> list[Column]:
    """The table's columns: measures, latency percentiles, index time."""
    cols = [Column(measure_label(m), _summary(view, m), "max", 4) for m in table_measures(result)]
    cols += [
        Column("p50 ms", _latency(view, "p50_ms"), "min", 3),
        Column("p95 ms", _latency(view, "p95_ms"), "min", 3),
        Column("index s", lambda c: c.index_time_s, "min", 2),
    ]
    return cols


def category_columns(
    result: BenchmarkResult, category: str, view: ViewName = "all"
) -> list[Column]:
    return [
        Column(measure_label(m), _category(view, category, m), "max", 4)
        for m in table_measures(result)
    ]


def render_table(result: BenchmarkResult, console: Console, *, by_category: bool = False) -> None:
    """Print the comparison table, failures and recommendations to ``console``."""
    suite = result.suite
    ok = result.successful
    title = (
        f"{suite.name}: {suite.num_judged_queries} judged queries, {suite.num_documents} documents"
    )
    if ok:
        console.print(_rich_table(title, ok, columns(result)))
    if by_category and ok:
        for category in suite.categories:
            scores = ok[0].view("all").per_category.get(category)
            n = 0 if scores is None else scores.num_queries
            console.print(
                _rich_table(
                    f"category {category} ({n} queries)", ok, category_columns(result, category)
                )
            )
    for c in ok:
        if c.skipped_queries:
            console.print(Text(_skipped_note(c), style="yellow"))
    resumed = [c.name for c in ok if c.resumed]
    if resumed:
        console.print(
            Text(f"reused from checkpoint (--fresh to redo): {', '.join(resumed)}", style="dim")
        )
    for failure in result.failures:
        console.print(Text(f"FAILED {failure.name}: {failure.error}", style="bold red"))
    for key, rec in result.recommendations.items():
        console.print(
            Text.assemble(
                (f"{_RECOMMENDATION_TITLES.get(key, key)}: ", "bold"),
                (rec.config, "bold cyan"),
                f"  ({rec.reason})",
            )
        )


def _rich_table(title: str, rows: Sequence[ConfigResult], cols: Sequence[Column]) -> Table:
    table = Table(title=Text(title), title_justify="left")
    table.add_column("configuration", no_wrap=True)
    for col in cols:
        table.add_column(col.header, justify="right")
    bests = [_best(col, rows) for col in cols]
    for row in rows:
        cells: list[Text | str] = [row.name]
        for col, best in zip(cols, bests, strict=True):
            value = col.value(row)
            text = _fmt(value, col.digits)
            style = "bold green" if value is not None and best is not None and value == best else ""
            cells.append(Text(text, style=style))
        table.add_row(*cells)
    return table


def to_markdown(result: BenchmarkResult, *, by_category: bool = False) -> str:
    """The comparison as Markdown; the best value of each column in bold."""
    ok = result.successful
    suite = result.suite
    parts = [f"## {suite.name}\n"]
    if suite.description:
        parts.append(f"{suite.description}\n")
    parts.append(f"{suite.num_judged_queries} judged queries, {suite.num_documents} documents.\n")
    if ok:
        parts.append(_md_table(ok, columns(result)))
    if by_category and ok:
        for category in suite.categories:
            parts.append(f"\n### Category `{category}`\n")
            parts.append(_md_table(ok, category_columns(result, category)))
    notes = [_skipped_note(c) for c in ok if c.skipped_queries]
    if notes:
        parts.append("\n" + "".join(f"- {n}\n" for n in notes))
    if result.failures:
        parts.append("\n### Failed configurations\n")
        parts.extend(f"- `{f.name}`: {f.error}\n" for f in result.failures)
    picks = result.recommendations.items()
    if picks:
        parts.append("\n### Recommendations\n")
        for key, rec in picks:
            title = _RECOMMENDATION_TITLES.get(key, key)
            parts.append(f"- **{title}**: `{rec.config}` ({rec.reason})\n")
    return "".join(parts)


def _md_table(rows: Sequence[ConfigResult], cols: Sequence[Column]) -> str:
    header = "| configuration | " + " | ".join(c.header for c in cols) + " |\n"
    rule = "|---|" + "|".join("---:" for _ in cols) + "|\n"
    bests = [_best(col, rows) for col in cols]
    body = ""
    for row in rows:
        cells = []
        for col, best in zip(cols, bests, strict=True):
            value = col.value(row)
            text = _fmt(value, col.digits)
            cells.append(f"**{text}**" if value is not None and value == best else text)
        body += f"| {row.name} | " + " | ".join(cells) + " |\n"
    return header + rule + body


def to_json(result: BenchmarkResult) -> str:
    return result.to_json()


def _skipped_note(config: ConfigResult) -> str:
    skipped = config.skipped_queries
    reasons = sorted(set(skipped.values()))
    return f"{config.name}: {len(skipped)} queries skipped and scored 0 ({'; '.join(reasons)})"


def _best(col: Column, rows: Sequence[ConfigResult]) -> float | None:
    values = [v for v in (col.value(r) for r in rows) if v is not None]
    if not values:
        return None
    return max(values) if col.better == "max" else min(values)


def _fmt(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _summary(view: ViewName, measure: str) -> Callable[[ConfigResult], float | None]:
    return lambda c: c.view(view).summary.get(measure)


def _latency(view: ViewName, key: str) -> Callable[[ConfigResult], float | None]:
    return lambda c: getattr(c.view(view).latency, key)


def _category(
    view: ViewName, category: str, measure: str
) -> Callable[[ConfigResult], float | None]:
    def value(c: ConfigResult) -> float | None:
        scores = c.view(view).per_category.get(category)
        return None if scores is None else scores.means.get(measure)

    return value
