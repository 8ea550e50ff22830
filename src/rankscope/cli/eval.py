"""``rankscope eval``: score runs against qrels, as a table for people or JSON/CSV for scripts.

Output formats (stable), written by :mod:`rankscope.report.results`:

- ``table`` (default): runs as rows, measures as columns; with ``-q`` a per-query table first.
- ``json``: :meth:`rankscope.metrics.results.Results.to_dict` (``per_query`` only with ``-q``).
- ``csv``: header ``run,query_id,measure,value``; the aggregate rows have an empty ``query_id``;
  with ``-q`` the per-query rows come first for each run; values at full precision.
- ``markdown``: the table as a Markdown table (values as in the table); with ``-q`` a per-query
  table first.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Literal

import typer

from rankscope.cli.options import (
    DepthOption,
    Format,
    JudgedOnlyOption,
    RelLevelOption,
    lean_numpy,
)
from rankscope.errors import InputError

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
    from rankscope.report.results import print_results, results_csv, results_markdown

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
        sys.stdout.write(results_csv(results, per_query=per_query))
    elif output_format is Format.markdown:
        sys.stdout.write(results_markdown(results, per_query=per_query))
    else:
        print_results(results, per_query=per_query)


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


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
    app.command("measures")(measures_command)
