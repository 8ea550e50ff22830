"""The report's "Queries that moved": per configuration, its per-query diff from the best
(:mod:`rankscope.diff`) as a table of queries by Δ; a click on a query opens both ranked lists
side by side.

Plain HTML: each configuration and each query is a ``<details>`` element, so the page opens
and closes them itself, with no script, from ``file://`` as from a server. Every text from the
files (query texts, document ids, titles, snippets, configuration names) is escaped, with
characters that are not printable written as ``\\x..`` escapes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rankscope.report.rundiff import fmt
from rankscope.util.markup import html_text as _e
from rankscope.util.markup import one_line as line

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.bench.results import BenchmarkResult, ViewName
    from rankscope.diff.core import DiffRow, MissedDoc, QueryDiff, RunDiff

#: characters of a document's title (or text) shown beside its id
SNIPPET_CHARS = 120

STYLE = """
#query-diffs details.config { border: 1px solid #d8dee6; border-radius: 4px; margin: 10px 0;
  padding: 0 8px; }
#query-diffs details.config > summary { cursor: pointer; padding: 6px 0; font-size: 0.92rem; }
#query-diffs .qd-grid { display: grid; gap: 0 10px; align-items: baseline;
  grid-template-columns: minmax(4em, 8em) minmax(3em, 7em) minmax(8em, 1fr) 5.5em 5.5em 6em 8em;
  font-size: 0.84rem; font-variant-numeric: tabular-nums; padding: 3px 4px; }
#query-diffs .qd-head { font-weight: 600; background: #f3f6f9; }
#query-diffs details.qd > summary { cursor: pointer; list-style: none;
  border-bottom: 1px solid #e3e8ee; }
#query-diffs details.qd > summary::-webkit-details-marker { display: none; }
#query-diffs details.qd > summary:hover { background: #f7f9fb; }
#query-diffs details.qd[open] > summary { background: #eef3f8; }
#query-diffs .qd-grid > span { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
#query-diffs .num { text-align: right; }
#query-diffs .loss .delta { color: #c62828; font-weight: 600; }
#query-diffs .win .delta { color: #2e7d32; font-weight: 600; }
#query-diffs .sbs { display: flex; gap: 16px; flex-wrap: wrap; padding: 8px 4px 12px; }
#query-diffs table.side { flex: 1 1 420px; margin: 0; }
#query-diffs table.side caption { text-align: left; font-weight: 600; padding: 2px 0; }
#query-diffs table.side td { white-space: normal; vertical-align: top; }
#query-diffs table.side th:nth-child(2), #query-diffs td.doc { text-align: left; }
#query-diffs td.doc { max-width: 34em; }
#query-diffs table.side th:last-child, #query-diffs td.move { text-align: left; }
#query-diffs td.doc .id { font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
#query-diffs td.doc .title { color: #3c4654; }
#query-diffs td.unjudged { color: #8a5300; }
#query-diffs td.relevant { color: #2e7d32; font-weight: 600; }
#query-diffs td.up { color: #2e7d32; }
#query-diffs td.down { color: #c62828; }
#query-diffs td.new { color: #1b6ac9; }
#query-diffs td.gone { color: #5f6b7a; }
#query-diffs p.missed, #query-diffs p.qtext { font-size: 0.84rem; margin: 4px; }
"""


def _move_class(move: str) -> str:
    if move.startswith("↑"):
        return "up"
    if move.startswith("↓"):
        return "down"
    return {"new": "new", "gone": "gone"}.get(move, "same")


def _doc_cell(row: DiffRow | MissedDoc) -> str:
    """The id, and the title (else the start of the text): one line of text per document keeps
    a report of many queries small."""
    label = row.title or row.snippet
    if len(label) > SNIPPET_CHARS:
        label = label[: SNIPPET_CHARS - 1].rstrip() + "…"
    text = f' <span class="title">{_e(line(label))}</span>' if label else ""
    return f'<td class="doc"><span class="id">{_e(row.doc_id)}</span>{text}</td>'


def _grade_cell(row: DiffRow, level: int) -> str:
    if row.grade is None:
        return '<td class="grade unjudged">unjudged</td>'
    relevant = " relevant" if row.grade >= max(level, 1) else ""
    return f'<td class="grade{relevant}">{row.grade}</td>'


def _side(name: str, rows: Sequence[DiffRow], side: str, level: int) -> str:
    body = "".join(
        f'<tr data-doc="{_e(r.doc_id)}" data-rank="{r.rank}"><td>{r.rank}</td>{_doc_cell(r)}'
        f"{_grade_cell(r, level)}"
        f'<td class="move {_move_class(r.moved)}">{_e(r.moved)}</td></tr>'
        for r in rows
    )
    empty = "" if rows else '<tr><td colspan="4">(no documents)</td></tr>'
    return (
        f'<table class="side" data-side="{side}"><caption>{_e(name)}</caption>'
        "<thead><tr><th>#</th><th>document</th><th>grade</th><th>move</th></tr></thead>"
        f"<tbody>{body}{empty}</tbody></table>"
    )


def _query(diff: RunDiff, q: QueryDiff) -> str:
    k = diff.depth
    head = (
        f'<span class="qid">{_e(q.query_id)}</span>'
        f'<span class="cat">{_e(q.category or "")}</span>'
        f'<span class="qtext" title="{_e(line(q.query))}">{_e(line(q.query))}</span>'
        f'<span class="num" data-value="{q.a.value!r}">{fmt(q.a.value)}</span>'
        f'<span class="num" data-value="{q.b.value!r}">{fmt(q.b.value)}</span>'
        f'<span class="num delta" data-value="{q.delta!r}">{fmt(q.delta, signed=True)}</span>'
        f'<span class="num">{q.a.judged}/{len(q.a.rows)} → {q.b.judged}/{len(q.b.rows)}</span>'
    )
    parts = [
        f'<details class="qd {q.outcome}" data-query="{_e(q.query_id)}" '
        f'data-outcome="{q.outcome}" data-delta="{q.delta!r}">'
        f'<summary class="qd-grid">{head}</summary>'
    ]
    if q.query:
        parts.append(f'<p class="qtext">{_e(line(q.query))}</p>')
    for side, name in ((q.a, diff.a.name), (q.b, diff.b.name)):
        if not side.in_run:
            parts.append(
                f'<p class="missed">{_e(name)} did not answer this query: scored as an empty '
                "ranking.</p>"
            )
    parts.append('<div class="sbs">')
    if q.same_top and q.a.rows:
        label = f"{diff.a.name} and {diff.b.name} (identical top {k})"
        parts.append(_side(label, q.a.rows, "both", diff.rel_level))
    else:
        parts.append(_side(diff.a.name, q.a.rows, "a", diff.rel_level))
        parts.append(_side(diff.b.name, q.b.rows, "b", diff.rel_level))
    parts.append("</div>")
    if q.missed:
        missed = ", ".join(
            f'<span data-doc="{_e(m.doc_id)}">{_e(m.doc_id)}</span> (grade {m.grade}; '
            f"{_e(diff.a.name)} {_rank(m.rank_a)}, {_e(diff.b.name)} {_rank(m.rank_b)})"
            for m in q.missed
        )
        parts.append(f'<p class="missed">Relevant in neither top {k}: {missed}</p>')
    parts.append("</details>")
    return "".join(parts)


def _rank(rank: int | None) -> str:
    return "not retrieved" if rank is None else f"#{rank}"


def _config(diff: RunDiff, label: str, first: bool) -> str:
    c = diff.counts
    k = diff.depth
    summary = (
        f"<b>{_e(diff.b.name)}</b> vs {_e(diff.a.name)}: {c.losses} losses, {c.wins} wins, "
        f"{c.ties} ties ({c.identical} with identical top {k}); unjudged in the top {k}: "
        f"{_e(diff.a.name)} {diff.a.unjudged}, {_e(diff.b.name)} {diff.b.unjudged}"
    )
    head = (
        '<div class="qd-grid qd-head"><span>query</span><span>category</span><span>text</span>'
        f'<span class="num">{_e(diff.a.name)}</span><span class="num">{_e(diff.b.name)}</span>'
        f'<span class="num" title="Δ {_e(label)}">Δ</span><span class="num">judged@{k}</span></div>'
    )
    rows = "".join(_query(diff, q) for q in diff.shown)
    opened = " open" if first else ""
    return (
        f'<details class="config" data-config="{_e(diff.b.name)}"{opened}>'
        f"<summary>{summary}</summary>{head}{rows}</details>"
    )


def diffs_html(diffs: Sequence[RunDiff], label: str, notes: Sequence[str] = ()) -> str:
    """The section, or '' when there is nothing to show."""
    if not diffs:
        if not notes:
            return ""
        text = "".join(f"<li>{_e(n)}</li>" for n in notes)
        return f'<section id="query-diffs"><h2>Queries that moved</h2><ul>{text}</ul></section>'
    first = diffs[0]
    k = first.depth
    how = (
        f"Each configuration against {_e(first.a.name)}, query by query: Δ is its {_e(label)} "
        f"minus {_e(first.a.name)}'s (as in the per-query differences above), the queries "
        "sorted by |Δ|, losses first, ties last (equal values). Click a query to open both "
        f"ranked lists, top {k}: each document's grade (or unjudged) and its move from "
        f"{_e(first.a.name)}'s list to the configuration's (↑ higher, ↓ lower, new, gone), "
        f"then the relevant documents neither shows. judged@{k}: judged documents among "
        "those shown. The same view in a terminal: "
        f"<code>rankscope diff OUT {_e(first.a.name)} CONFIG</code>."
    )
    notes_html = "".join(f'<p class="how warn">{_e(n)}</p>' for n in notes)
    body = "".join(_config(d, label, i == 0) for i, d in enumerate(diffs))
    return (
        f'<section id="query-diffs"><h2>Queries that moved</h2><p class="how">{how}</p>'
        f"{notes_html}{body}</section>"
    )


def report_diffs(
    result: BenchmarkResult,
    folder: object,
    baseline: str,
    others: Sequence[str],
    view: ViewName,
) -> tuple[list[RunDiff], list[str]]:
    """The diffs the report shows, and notes; a folder that cannot give them (run files gone)
    gives a note instead of failing the report."""
    from pathlib import Path

    from rankscope.diff.bench import BenchFolder, diff_configurations
    from rankscope.errors import RankscopeError

    if not others:
        return [], []
    bench = BenchFolder(result, Path(str(folder)))
    try:
        diffs = diff_configurations(bench, baseline, others, view=view)
    except RankscopeError as error:
        return [], [f"Queries that moved: not shown ({error})"]
    return diffs, list(diffs[0].notes) if diffs else []


__all__ = ["STYLE", "diffs_html", "report_diffs"]
