"""The :class:`~rankscope.metrics.results.Results` of ``rankscope eval`` in its formats: CSV,
Markdown and the terminal (JSON is :meth:`Results.to_json`).

What is shown is the Results' own: its summary table (:meth:`Results.table_rows`, runs as rows,
measures as columns, values as :func:`~rankscope.metrics.results.format_value` writes them) and,
per query, the same values query by query. This module imports neither the benchmark's values
nor the other formats' modules, so ``rankscope eval`` starts without them.

- CSV: header ``run,query_id,measure,value``; the aggregate rows have an empty ``query_id``
  (trec_eval's ``all`` could be a query's id; no query id is empty); with ``per_query`` the
  per-query rows come first for each run. Values at full precision (``repr`` of the float);
  text cells spreadsheet-safe (:mod:`rankscope.util.csvcells`).
- Markdown: the summary table; with ``per_query`` a per-query table first.
- Terminal: the summary table (rich, widened so that no cell wraps) and the number of queries;
  with ``per_query`` a plain fixed-width per-query table first (a rich table of 10,000 queries
  takes far too long to lay out). Where standard output is no terminal (a pipe, a file) and
  every cell is plain ASCII, the same bytes are written without rich (:func:`summary_text`):
  importing rich costs ``rankscope eval`` about 0.1 s, as much as it spends evaluating.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from rankscope.metrics.results import count, format_value
from rankscope.util.csvcells import Cell, csv_table
from rankscope.util.markup import markdown_table

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

    from rankscope.metrics.results import Results


def results_csv(results: Results, *, per_query: bool = False) -> str:
    """``results`` as CSV (see the module)."""
    rows: list[list[Cell]] = []
    for run in results.run_names:
        if per_query:
            for query, values in results.per_query(run).items():
                rows.extend([run, query, name, value] for name, value in values.items())
        rows.extend([run, "", name, value] for name, value in results.mean(run).items())
    return csv_table(["run", "query_id", "measure", "value"], rows)


def results_markdown(results: Results, *, per_query: bool = False) -> str:
    """``results`` as Markdown (see the module)."""

    def table(header: list[str], rows: list[list[str]], left: int) -> str:
        align = "l" * left + "r" * (len(header) - left)
        return "".join(line + "\n" for line in markdown_table(header, rows, align))

    out = []
    if per_query:
        named = list(zip(results.measure_objects, results.measures, strict=True))
        rows = [
            [run, query, *(format_value(m, values[name]) for m, name in named)]
            for run in results.run_names
            for query, values in results.per_query(run).items()
        ]
        out.append(table(["run", "query", *results.measures], rows, 2) + "\n")
    header, rows = results.table_rows()
    out.append(table(header, rows, 1))
    counts = {len(results.query_ids(r)) for r in results.run_names}
    if len(counts) == 1:
        out.append(f"\n{count(counts.pop(), 'query', 'queries')}\n")
    else:
        shown = ", ".join(f"{r}: {len(results.query_ids(r))}" for r in results.run_names)
        out.append(f"\nqueries per run differ ({shown})\n")
    return "".join(out)


def print_results(
    results: Results, *, per_query: bool = False, console: Console | None = None
) -> None:
    """Print ``results`` to the terminal (see the module); ``console`` defaults to standard
    output's, widened so that no cell of the summary wraps."""
    header, rows = results.table_rows()
    counts = {len(results.query_ids(r)) for r in results.run_names}
    if len(counts) == 1:
        counted = count(counts.pop(), "query", "queries")
    else:
        shown = ", ".join(f"{r}: {len(results.query_ids(r))}" for r in results.run_names)
        counted = f"queries per run differ ({shown}); -c scores all qrels queries"
    plain = summary_text(header, rows) if console is None and _plain_stdout() else None
    if plain is not None and len(counted) <= plain.index("\n"):  # the line is not wrapped
        out = sys.stdout
        out.write((per_query_text(results) if per_query else "") + plain + counted + "\n")
        out.flush()
        return
    from rich.console import Console
    from rich.text import Text

    needed = sum(max(len(c) for c in col) + 3 for col in zip(header, *rows, strict=True)) + 1
    if console is None:
        console = Console(highlight=False, soft_wrap=False)
        if console.width < needed:
            console = Console(highlight=False, soft_wrap=False, width=needed)
    if per_query:
        console.file.write(per_query_text(results))
        console.file.flush()
    console.print(results)  # Results.__rich__: names as text, not markup
    console.print(Text(counted, style="dim"))


def summary_text(header: list[str], rows: list[list[str]]) -> str | None:
    """The summary table as rich lays out :meth:`Results.__rich__` for a console that is no
    terminal: no edge, a heavy head, the first column left-aligned and the rest right-aligned,
    each cell padded by one space; None where only rich can lay it out (a cell that is not
    printable ASCII, which rich measures by its terminal width, or with spaces that rich may
    fold)."""
    cells = [header, *rows]
    if not all(_plain_cell(c) for row in cells for c in row):
        return None
    widths = [max(len(c) for c in column) for column in zip(*cells, strict=True)]

    def line(row: list[str], bar: str) -> str:
        first = f" {row[0].ljust(widths[0])} "
        rest = (f" {c.rjust(w)} " for c, w in zip(row[1:], widths[1:], strict=True))
        return bar.join([first, *rest]) + "\n"

    rule = "╇".join("━" * (w + 2) for w in widths) + "\n"
    return line(header, "┃") + rule + "".join(line(row, "│") for row in rows)


def _plain_cell(cell: str) -> bool:
    return cell.isascii() and cell.isprintable() and cell == cell.strip() and "  " not in cell


def _plain_stdout() -> bool:
    """Standard output is what rich would write to without styles or substituted box
    characters: no terminal (nor one forced by $FORCE_COLOR or $TTY_COMPATIBLE), a UTF-8
    encoding, no notebook and not Windows' legacy console."""
    out = sys.stdout
    if sys.platform == "win32" or "IPython" in sys.modules:
        return False
    if os.environ.get("FORCE_COLOR") or os.environ.get("TTY_COMPATIBLE") == "1":
        return False
    if not (getattr(out, "encoding", None) or "utf-8").lower().startswith("utf"):
        return False
    try:
        return not out.isatty()
    except ValueError:  # closed
        return False


def per_query_text(results: Results) -> str:
    """Every query's values as a plain fixed-width table (run and query left-aligned, the
    values right-aligned), then an empty line."""
    header = ["run", "query", *results.measures]
    rows: list[list[str]] = []
    for run in results.run_names:
        values = results.run(run).values
        formatted = [
            [format_value(m, v) for v in values[j].tolist()]
            for j, m in enumerate(results.measure_objects)
        ]
        for i, query in enumerate(results.query_ids(run)):
            rows.append([run, query, *(column[i] for column in formatted)])
    widths = [max(len(c) for c in column) for column in zip(header, *rows, strict=True)]

    def line(cells: list[str]) -> str:
        left = [c.ljust(w) for c, w in zip(cells[:2], widths[:2], strict=True)]
        right = [c.rjust(w) for c, w in zip(cells[2:], widths[2:], strict=True)]
        return "  ".join(left + right).rstrip() + "\n"

    out = [line(header), line(["-" * w for w in widths])]
    out.extend(line(r) for r in rows)
    out.append("\n")
    return "".join(out)


__all__ = ["per_query_text", "print_results", "results_csv", "results_markdown", "summary_text"]
