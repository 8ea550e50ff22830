"""A :class:`~rankscope.diff.core.RunDiff` (``rankscope diff``) as a terminal table (rich,
fitting the terminal's width, 80 columns when piped), Markdown and JSON; its HTML, in the
benchmark report, is :mod:`rankscope.report.diffs`.

Every format states the summary over every compared query (wins, losses, ties, unjudged
documents per run) and then the queries shown, each with its two lists side by side. Texts
from the files (query texts, document ids, titles, snippets) are shown as text: control and
format characters are written as ``\\x..`` escapes, rich markup and Markdown/HTML syntax in
them are escaped, so nothing in a file can style, link or move the output.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from rankscope.diff.core import DiffRow, MissedDoc, QueryDiff, RunDiff
from rankscope.util.markup import markdown_table
from rankscope.util.markup import one_line as line
from rankscope.util.markup import printable as plain

MARKS = {"win": "▲", "loss": "▼", "tie": "="}
SORT_TEXT = {
    "change": "largest |Δ| first",
    "delta": "Δ ascending (largest loss first)",
    "query": "by query id",
}


# ----------------------------------------------------------------------------- text helpers
def fmt(value: float, signed: bool = False) -> str:
    if math.isnan(value):
        return "—"
    if round(value, 4) == 0:
        value = 0.0  # no "-0.0000"
    return f"{value:+.4f}" if signed else f"{value:.4f}"


def grade_text(row: DiffRow | MissedDoc, short: bool = False) -> str:
    if row.grade is None:
        return "unj" if short else "unjudged"
    return str(row.grade)


def rank_text(rank: int | None) -> str:
    return "—" if rank is None else f"#{rank}"


def summary_lines(diff: RunDiff) -> list[str]:
    """The lines every format states above the queries."""
    a, b, c = diff.a, diff.b, diff.counts
    k = diff.depth
    where = f" (view {diff.view})" if diff.view else ""
    cut = "" if diff.eval_depth is None else f", rankings cut at {diff.eval_depth} (-M)"
    lines = [
        f"{b.name} vs {a.name}: {diff.measure}, {c.total} queries{where}, top {k} shown{cut}",
        f"{diff.aggregate}: {a.name} {fmt(a.mean)}, {b.name} {fmt(b.mean)}; Δ = {b.name} - "
        f"{a.name} = "
        f"{fmt(b.mean - a.mean, signed=True)}",
        f"{b.name}: {c.wins} wins, {c.losses} losses, {c.ties} ties (equal values; "
        f"{c.identical} with identical top {k})",
        f"unjudged in the top {k}: {a.name} {a.unjudged} (judged@{k} {fmt(a.judged_at_k)}), "
        f"{b.name} {b.unjudged} (judged@{k} {fmt(b.judged_at_k)})",
    ]
    shown = f"{len(diff.shown)} of {c.total} queries shown, {SORT_TEXT[diff.sort]}"
    if diff.filters:
        shown += "; " + "; ".join(diff.filters)
    lines.append(shown)
    return lines + [f"note: {n}" for n in diff.notes]


def query_line(diff: RunDiff, q: QueryDiff) -> str:
    k = diff.depth
    return (
        f"{diff.measure} {fmt(q.a.value)} → {fmt(q.b.value)}, Δ {fmt(q.delta, signed=True)}; "
        f"judged@{k} {q.a.judged}/{len(q.a.rows)} → {q.b.judged}/{len(q.b.rows)}; "
        f"{q.num_relevant} relevant"
    )


def side_note(diff: RunDiff, q: QueryDiff) -> str | None:
    lacking = [s for s, side in ((diff.a.name, q.a), (diff.b.name, q.b)) if not side.in_run]
    if not lacking:
        return None
    return f"not in {' nor '.join(lacking)}: scored as an empty ranking (trec_eval -c)"


def missed_text(diff: RunDiff, m: MissedDoc) -> str:
    return (
        f"{plain(m.doc_id)} (grade {m.grade}; {diff.a.name} {rank_text(m.rank_a)}, "
        f"{diff.b.name} {rank_text(m.rank_b)})"
    )


# ----------------------------------------------------------------------------- terminal
_MOVE_STYLE = {"new": "cyan", "gone": "dim", "=": "dim"}


def _move_style(move: str) -> str:
    if move.startswith("↑"):
        return "green"
    if move.startswith("↓"):
        return "red"
    return _MOVE_STYLE.get(move, "")


def _doc_cell(row: DiffRow) -> Text:
    cell = Text(plain(row.doc_id))
    label = row.title or row.snippet
    if label:
        cell.append(" " + line(label), style="dim")
    return cell


def _grade_cell(row: DiffRow, level: int) -> Text:
    if row.grade is None:
        return Text("unj", style="yellow")
    return Text(str(row.grade), style="bold green" if row.grade >= max(level, 1) else "")


def _pairs(q: QueryDiff) -> Iterator[tuple[DiffRow | None, DiffRow | None]]:
    for i in range(max(len(q.a.rows), len(q.b.rows))):
        yield (
            q.a.rows[i] if i < len(q.a.rows) else None,
            q.b.rows[i] if i < len(q.b.rows) else None,
        )


def _side_table(diff: RunDiff, q: QueryDiff) -> Table:
    table = Table(box=None, padding=(0, 1), expand=True, show_edge=False, pad_edge=False)
    table.add_column("#", justify="right", no_wrap=True, width=3)
    for n, name in enumerate((diff.a.name, diff.b.name)):
        table.add_column(
            Text(plain(name), style="bold"), ratio=1, no_wrap=True, overflow="ellipsis"
        )
        table.add_column("g", justify="right", no_wrap=True, width=3)
        table.add_column("move", no_wrap=True, width=5)
        if n == 0:
            table.add_column("│", no_wrap=True, width=1, style="dim")
    for i, (ra, rb) in enumerate(_pairs(q), 1):
        cells: list[RenderableType] = [Text(str(i), style="dim")]
        for n, row in enumerate((ra, rb)):
            if row is None:
                cells += [Text(""), Text(""), Text("")]
            else:
                cells += [
                    _doc_cell(row),
                    _grade_cell(row, diff.rel_level),
                    Text(row.moved, style=_move_style(row.moved)),
                ]
            if n == 0:
                cells.append(Text("│"))
        table.add_row(*cells)
    return table


def render_table(diff: RunDiff) -> RenderableType:
    """The summary, then per query shown: its line, its text, both lists, the missed."""
    parts: list[RenderableType] = [Text(plain(text)) for text in summary_lines(diff)]
    parts.append(
        Text(
            f"g: grade, unj: unjudged; move from {plain(diff.a.name)} to {plain(diff.b.name)}: "
            "↑ up, ↓ down, new, gone",
            style="dim",
        )
    )
    style = {"win": "bold green", "loss": "bold red", "tie": "bold"}
    for q in diff.shown:
        head = Text()
        head.append(f"{MARKS[q.outcome]} {plain(q.query_id)}", style=style[q.outcome])
        if q.category:
            head.append(f" [{plain(q.category)}]", style="dim")
        head.append("  " + query_line(diff, q))
        parts += [Text(""), head]
        if q.query:
            parts.append(Text(line(q.query), style="italic", overflow="ellipsis", no_wrap=True))
        note = side_note(diff, q)
        if note:
            parts.append(Text(note, style="yellow"))
        if q.a.rows or q.b.rows:
            parts.append(_side_table(diff, q))
        if q.missed:
            parts.append(
                Text(
                    f"relevant in neither top {diff.depth}: "
                    + ", ".join(missed_text(diff, m) for m in q.missed),
                    style="dim",
                )
            )
    return Group(*parts)


def print_table(diff: RunDiff, console: Console | None = None) -> None:
    console = console or Console(highlight=False)
    console.print(render_table(diff))


def to_text(diff: RunDiff, width: int = 80) -> str:
    """The terminal output as plain text, ``width`` columns wide."""
    import io

    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None, highlight=False)
    print_table(diff, console)
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()) + "\n"


# ----------------------------------------------------------------------------- markdown
_MD_ESCAPE = {
    "\\": "\\\\",
    "`": "\\`",
    "*": "\\*",
    "_": "\\_",
    "[": "\\[",
    "]": "\\]",
    "#": "\\#",
    "|": "\\|",
    "~": "\\~",
    "!": "\\!",
    "<": "&lt;",
    ">": "&gt;",
    "&": "&amp;",
}


def md(text: str) -> str:
    """``text`` as inert Markdown: no emphasis, link, image, HTML tag or table cell break."""
    return "".join(_MD_ESCAPE.get(c, c) for c in plain(text))


def _md_doc(row: DiffRow | None) -> list[str]:
    if row is None:
        return ["", "", ""]
    label = row.title or row.snippet
    if len(label) > 80:
        label = label[:79].rstrip() + "…"
    doc = md(row.doc_id) + (f" {md(line(label))}" if label else "")
    return [doc, grade_text(row), row.moved]


def _md_side(diff: RunDiff, q: QueryDiff) -> list[str]:
    head = ["#", md(diff.a.name), "grade", "move", md(diff.b.name), "grade", "move"]
    rows = [[str(i), *_md_doc(ra), *_md_doc(rb)] for i, (ra, rb) in enumerate(_pairs(q), 1)]
    return markdown_table(head, rows, "rlrllrl", escape=None)  # md() escaped every cell


def to_markdown(diff: RunDiff) -> str:
    out = [f"## {md(diff.b.name)} vs {md(diff.a.name)}: {diff.measure}", ""]
    out += [f"- {md(line)}" for line in summary_lines(diff)]
    out += [f"- move from {md(diff.a.name)} to {md(diff.b.name)}: ↑ up, ↓ down, new, gone"]
    for q in diff.shown:
        category = f" [{md(q.category)}]" if q.category else ""
        out += ["", f"### {MARKS[q.outcome]} {md(q.query_id)}{category}", ""]
        if q.query:
            out += [f"> {md(line(q.query))}", ""]
        out.append(md(query_line(diff, q)))
        note = side_note(diff, q)
        if note:
            out += ["", md(note)]
        if q.a.rows or q.b.rows:
            out += ["", *_md_side(diff, q)]
        if q.missed:
            out += [
                "",
                f"Relevant in neither top {diff.depth}: "
                + ", ".join(md(missed_text(diff, m)) for m in q.missed),
            ]
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------- json
def to_json(diff: RunDiff) -> str:
    """:meth:`RunDiff.to_dict` as JSON (UTF-8 text; ``\\u`` escapes only where a text holds a
    lone surrogate, which UTF-8 cannot carry)."""
    data = diff.to_dict()
    text = json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(data, ensure_ascii=True, indent=2, allow_nan=False)
    return text


__all__ = [
    "MARKS",
    "fmt",
    "grade_text",
    "md",
    "print_table",
    "query_line",
    "render_table",
    "summary_lines",
    "to_json",
    "to_markdown",
    "to_text",
]
