"""A benchmark report as one self-contained HTML file: inline CSS and SVG figures, no script,
no font, no network.

Sections: the recommendations; the comparison table (headline mean with its 95% interval,
difference from the best with its simultaneous interval and p-value, ▼ for significantly worse;
p50 latency and the per-query latency difference from the fastest); a forest plot of the
differences; the sorted per-query differences; the queries that moved, each opening both ranked
lists side by side (``<details>``, :mod:`rankscope.report.diffs`); quality against latency with
the Pareto front; per-category results; every measure; notes, failures and how everything was
computed.

Every number cell carries ``data-key`` and ``data-value`` (the exact float from
``results.json``) beside its rounded text.
"""

from __future__ import annotations

import math

from rankscope.report.content import ReportContent
from rankscope.report.diffs import STYLE as DIFF_STYLE
from rankscope.report.diffs import diffs_html
from rankscope.report.figures import (
    MAX_DIFFERENCE_PANELS,
    differences_svg,
    forest_svg,
    scatter_svg,
)
from rankscope.report.tables import Cell, Table, category_table, comparison_table, measures_table
from rankscope.util.markup import html_text as _e

STYLE = """
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif;
  margin: 0 auto; max-width: 1180px; padding: 24px 32px 48px; color: #1d2430;
  line-height: 1.45; background: #ffffff; }
h1 { font-size: 1.6rem; margin: 0 0 4px; }
h2 { font-size: 1.2rem; margin: 32px 0 8px; border-bottom: 1px solid #d8dee6; padding-bottom: 4px; }
p.meta { color: #5f6b7a; margin: 0 0 16px; font-size: 0.9rem; }
table { border-collapse: collapse; font-size: 0.86rem; margin: 8px 0;
  font-variant-numeric: tabular-nums; }
th, td { padding: 4px 10px; border-bottom: 1px solid #e3e8ee; text-align: right;
  white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
th { background: #f3f6f9; font-weight: 600; }
tr.best td:first-child { font-weight: 600; }
td.worse { color: #c62828; font-weight: 600; }
td.better { color: #2e7d32; font-weight: 600; }
td.best { color: #1b6ac9; font-weight: 600; }
td.top { font-weight: 700; }
.figure svg { max-width: 100%; height: auto; }
.scroll { overflow-x: auto; max-width: 100%; }
.picks li { margin: 4px 0; }
.picks b { color: #1b6ac9; }
p.how, ul.notes { color: #3c4654; font-size: 0.88rem; }
code { background: #f3f6f9; padding: 1px 4px; border-radius: 3px; font-size: 0.85rem; }
.warn { color: #8a5300; }
.fail { color: #c62828; }
"""


def _cell(cell: Cell, top: bool = False) -> str:
    attrs = []
    classes = []
    if cell.key is not None:
        attrs.append(f'data-key="{_e(cell.key)}"')
    if cell.value is not None and math.isfinite(cell.value):
        attrs.append(f'data-value="{cell.value!r}"')
    if top:
        classes.append("top")
    if cell.mark:
        classes.append(cell.mark)
    if classes:
        attrs.append(f'class="{" ".join(classes)}"')
    return f"<td {' '.join(attrs)}>{_e(cell.text)}</td>" if attrs else f"<td>{_e(cell.text)}</td>"


def _table(table: Table, table_id: str, best: str | None = None) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in table.header)
    body = []
    for r, (name, cells) in enumerate(table.rows):
        row_class = ' class="best"' if name == best else ""
        tds = "".join(_cell(c, table.is_top(r, i)) for i, c in enumerate(cells))
        body.append(
            f'<tr data-{table.row_kind}="{_e(name)}"{row_class}><td>{_e(name)}</td>{tds}</tr>'
        )
    return (
        f'<div class="scroll"><table id="{table_id}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def _figure(svg: str | None, section: str, title: str, caption: str) -> str:
    if svg is None:
        return ""
    return (
        f'<section id="{section}"><h2>{_e(title)}</h2>'
        f'<div class="figure">{svg}</div><p class="how">{_e(caption)}</p></section>'
    )


def to_html(content: ReportContent, folder: str = "<output folder>") -> str:
    """The whole report as one HTML document."""
    result = content.result
    suite = result.suite
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(suite.name)}: benchmark report</title>",
        f"<style>{STYLE}{DIFF_STYLE if content.query_diffs else ''}</style></head><body>",
        f"<h1>{_e(suite.name)}: benchmark report</h1>",
        f'<p class="meta">{_e(suite.description) + " · " if suite.description else ""}'
        f"rankscope {_e(result.rankscope_version)} · {_e(result.timestamp)} · view "
        f"<code>{_e(content.view)}</code></p>",
    ]
    if content.recommendations:
        picks = "".join(
            f"<li><b>{_e(title)}: {_e(config)}</b> ({_e(reason)})</li>"
            for title, config, reason in content.recommendations
        )
        parts.append('<section id="recommendations"><h2>Recommendations</h2>')
        parts.append(f'<ul class="picks">{picks}</ul></section>')
    parts.append('<section id="comparison"><h2>Comparison</h2>')
    parts.append(f"<p>{_e(content.title)}.</p>")
    if content.rows:
        parts.append(_table(comparison_table(content), "comparison-table", best=content.baseline))
    parts.append(
        f'<p class="how">{_e(content.test_text())} ▼ significantly worse than the best (or '
        "the fastest), ▲ significantly better.</p>"
    )
    command = content.command(folder)
    if command:
        parts.append(f'<p class="how">Recompute: <code>{_e(command)}</code></p>')
    parts.append("</section>")

    baseline = content.baseline or ""
    parts.append(
        _figure(
            forest_svg(content),
            "forest",
            "Difference from the best",
            f"Each configuration's mean {content.label} minus {baseline}'s, with its "
            "simultaneous 95% interval: an interval that does not reach 0 is a significant "
            "difference.",
        )
    )
    shown = min(len(content.differences), MAX_DIFFERENCE_PANELS)
    more = len(content.differences) - shown
    parts.append(
        _figure(
            differences_svg(content),
            "per-query",
            "Per-query differences",
            f"One bar per query: the configuration's {content.label} minus {baseline}'s, "
            "sorted; green above 0 (better on that query), red below."
            + (f" The {more} configurations furthest from the best are not drawn." if more else ""),
        )
    )
    parts.append(diffs_html(content.query_diffs, content.label, content.query_diff_notes))
    parts.append(
        _figure(
            scatter_svg(content),
            "quality-latency",
            "Quality and latency",
            f"Mean {content.label} (95% CI) against p50 latency (range of the per-pass p50s); "
            "the Pareto front joins the configurations that no other beats: at least as good on "
            "both within noise and significantly better on one (randomised Tukey HSD on quality, "
            "paired randomization test on per-query latency, Holm-corrected, over all pairs).",
        )
    )
    categories = category_table(content)
    if categories is not None:
        parts.append(f'<section id="categories"><h2>Per category: {_e(content.label)}</h2>')
        parts.append(_table(categories, "category-table"))
        parts.append(
            '<p class="how">Means over each category\'s queries of the view (query count in '
            "brackets); the best configuration of each category in bold.</p></section>"
        )
    if content.rows:
        parts.append(f'<section id="measures"><h2>Every measure ({content.num_queries} ')
        parts.append("queries)</h2>")
        parts.append(_table(measures_table(content), "measures-table"))
        parts.append("</section>")
    notes = [f'<li class="fail">FAILED {_e(n)}: {_e(e)}</li>' for n, e in content.failures]
    notes += [
        f'<li class="warn">{_e(n)}</li>'
        if n.startswith(("warning", "statistics"))
        else f"<li>{_e(n)}</li>"
        for n in content.other_notes()
    ]
    if notes:
        parts.append(f'<section id="notes"><h2>Notes</h2><ul class="notes">{"".join(notes)}</ul>')
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(p for p in parts if p) + "\n"


__all__ = ["to_html"]
