"""``rankscope eval``: score runs against qrels, as a table for people or JSON/CSV for scripts.

Output formats (stable):

- ``table`` (default): runs as rows, measures as columns; with ``-q`` a per-query table first.
- ``json``: :meth:`rankscope.metrics.results.Results.to_dict` (``per_query`` only with ``-q``).
- ``csv``: header ``run,query_id,measure,value``; the aggregate rows have an empty ``query_id``
  (trec_eval's ``all`` could be a query's id; no query id is empty); with ``-q`` the per-query
  rows come first for each run.  Values are printed with full precision (``repr`` of the float).
- ``markdown``: the table as a Markdown table (values as in the table); with ``-q`` a per-query
  table first.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import typer

from rankscope.cli.options import (
    DepthOption,
    Format,
    JudgedOnlyOption,
    RelLevelOption,
    lean_numpy,
)
from rankscope.errors import InputError

if TYPE_CHECKING:
    from rankscope.metrics.results import Results

# What a command runs on is imported inside it: every command module loads at start-up
# (cli/app.py), and numpy, pyarrow, pydantic and the rest only with the command that runs.

_MEASURE_HELP = (
    "Measure to compute; repeat for several. Canonical names: map, ndcg, ndcg@10, mrr, mrr@10, "
    "P@10, recall@100, map@100, Rprec, bpref, infAP, hit@5, judged@10, f1@10, ndcg_exp@10, "
    "iprec@0.5, num_rel_ret, ...; trec_eval names (ndcg_cut.10, P.5,10, recip_rank, official, "
    "all_trec) and ir_measures names (nDCG@10, AP, RR@10, R@100, Judged@10) work too. "
    "Default: map, ndcg@10, P@10, recall@100, mrr. List them all: rankscope measures."
)


#: what ``eval --format`` writes
EvalFormat = Literal[Format.table, Format.json, Format.csv, Format.markdown]


def eval_command(
    qrels: Path = typer.Argument(
        ..., metavar="QRELS", help="Relevance judgments (TREC qrels, BEIR TSV, ...)."
    ),
    runs: list[Path] = typer.Argument(
        ..., metavar="RUN", help="One or more run files (TREC, JSONL, CSV, ...)."
    ),
    measure: list[str] = typer.Option(
        [], "--measure", "-m", metavar="MEASURE", help=_MEASURE_HELP, show_default=False
    ),
    per_query: bool = typer.Option(False, "--per-query", "-q", help="Also show every query."),
    average_over_qrels: bool = typer.Option(
        False,
        "--average-over-qrels",
        "-c",
        help="Average over every qrels query, 0 for queries a run lacks (trec_eval -c).",
    ),
    depth: DepthOption = None,
    rel_level: RelLevelOption = 1,
    judged_only: JudgedOnlyOption = False,
    output_format: EvalFormat = typer.Option(
        Format.table,
        "--format",
        "-f",
        help="table or markdown for people; json or csv for scripts.",
    ),
) -> None:
    """Score runs against qrels: trec_eval's measures and more, several runs side by side."""
    lean_numpy()  # before numpy is imported
    from rankscope.metrics.evaluate import DEFAULT_MEASURES, evaluate
    from rankscope.metrics.names import parse_measures

    measures = parse_measures(measure or list(DEFAULT_MEASURES))  # fail fast on a bad name
    for path in (qrels, *runs):
        if not path.exists():
            raise InputError("file not found", path=path, hint="Check the path and try again")
        if path.is_dir():
            raise InputError("expected a file, got a directory", path=path)
    results = evaluate(
        qrels,
        list(runs),
        measures,
        depth=depth,
        rel_level=rel_level,
        judged_only=judged_only,
        average_over_qrels=average_over_qrels,
    )
    if output_format is Format.json:
        sys.stdout.write(results.to_json(per_query=per_query) + "\n")
    elif output_format is Format.csv:
        sys.stdout.write(_csv(results, per_query))
    elif output_format is Format.markdown:
        sys.stdout.write(_markdown(results, per_query))
    else:
        _print_tables(results, per_query)


def _csv(results: Results, per_query: bool) -> str:
    from rankscope.util.csvcells import Cell, csv_table

    rows: list[list[Cell]] = []
    for run in results.run_names:
        if per_query:
            for query, values in results.per_query(run).items():
                rows.extend([run, query, name, value] for name, value in values.items())
        rows.extend([run, "", name, value] for name, value in results.mean(run).items())
    return csv_table(["run", "query_id", "measure", "value"], rows)


def _markdown(results: Results, per_query: bool) -> str:
    from rankscope.metrics.results import count, format_value
    from rankscope.util.markup import markdown_table

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


def _print_tables(results: Results, per_query: bool) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from rankscope.metrics.results import count

    header, rows = results.table_rows()
    needed = sum(max(len(c) for c in col) + 3 for col in zip(header, *rows, strict=True)) + 1
    console = Console(highlight=False, soft_wrap=False)
    if console.width < needed:
        console = Console(highlight=False, soft_wrap=False, width=needed)
    if per_query:
        # Plain fixed-width text: a rich table of 10,000 queries takes far too long to lay out.
        sys.stdout.write(_per_query_text(results))
        sys.stdout.flush()
    # Names are shown as written: Text is not read as markup or :emoji: codes (a run called
    # "[b]m25" or "a:ok:b" keeps its brackets and colons), and nothing loads rich's emoji table.
    summary = Table(show_edge=False)
    summary.add_column(Text(header[0]))
    for name in header[1:]:
        summary.add_column(Text(name), justify="right")
    for row in rows:
        summary.add_row(*(Text(cell) for cell in row))
    console.print(summary)
    counts = {len(results.query_ids(r)) for r in results.run_names}
    if len(counts) == 1:
        console.print(Text(count(counts.pop(), "query", "queries"), style="dim"))
    else:
        shown = ", ".join(f"{r}: {len(results.query_ids(r))}" for r in results.run_names)
        line = f"queries per run differ ({shown}); -c scores all qrels queries"
        console.print(Text(line, style="dim"))


def measures_command() -> None:
    """List the measure names rankscope eval accepts (canonical spellings)."""
    from rich.console import Console
    from rich.table import Table

    from rankscope.metrics.names import describe_measures

    table = Table("measure", "computed as", "what it measures", show_edge=False)
    for row in describe_measures():
        table.add_row(*row)
    console = Console(highlight=False)
    console.print(table)
    console.print(
        "Aliases: trec_eval names (ndcg_cut.10, P_10, recip_rank, success.5) and ir_measures "
        "names (nDCG@10, AP, RR@10, R@100, Judged@10). Parameters: P(rel=2)@10, ndcg(1=3,2=9), "
        "P@5,10; sets: official, all_trec."
    )


def _per_query_text(results: Results) -> str:
    from rankscope.metrics.results import format_value

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


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
    app.command("measures")(measures_command)
