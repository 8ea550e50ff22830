"""``rankscope diff``: the queries that moved between two runs, with both ranked lists.

Two forms: ``rankscope diff QRELS RUN_A RUN_B`` (run files) and ``rankscope diff OUT CONFIG_A
CONFIG_B`` (a benchmark's output folder or its results.json, and two of its configurations).
Parses options, makes one library call (:func:`rankscope.diff.diff_runs` or
:func:`rankscope.diff.diff_benchmark`), filters, renders with :mod:`rankscope.report.rundiff`;
``--pool-unjudged`` writes the unjudged pairs shown as a pool (:mod:`rankscope.diff.pool`).
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import typer

from rankscope.cli.options import BenchViewOption, Format, RelLevelOption, View
from rankscope.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.diff import RunDiff

# What a command runs on is imported inside it: every command module loads at start-up
# (cli/app.py), and numpy, pyarrow, pydantic and the rest only with the command that runs.


#: what ``diff --format`` writes
DiffFormat = Literal[Format.table, Format.json, Format.markdown]


class OnlyChoice(StrEnum):
    losses = "losses"
    wins = "wins"
    ties = "ties"


class SortChoice(StrEnum):
    change = "change"
    delta = "delta"
    query = "query"


_OUTCOME = {"losses": "loss", "wins": "win", "ties": "tie"}


def diff_command(
    source: Path = typer.Argument(
        ...,
        metavar="QRELS|OUT",
        help="Relevance judgments (TREC qrels, BEIR TSV, ...), or a benchmark's output folder "
        "or results.json.",
        show_default=False,
    ),
    first: str = typer.Argument(
        ...,
        metavar="RUN_A|CONFIG_A",
        help="The run compared with (A): a run file, or a benchmark's configuration.",
        show_default=False,
    ),
    second: str = typer.Argument(
        ...,
        metavar="RUN_B|CONFIG_B",
        help="The run compared (B); Δ = B - A.",
        show_default=False,
    ),
    measure: str | None = typer.Option(
        None,
        "--measure",
        "-m",
        metavar="MEASURE",
        help="The measure whose per-query change sorts the queries (default: ndcg@10; for a "
        "benchmark, its headline). Any name rankscope eval accepts.",
        show_default=False,
    ),
    depth: int | None = typer.Option(
        None,
        "--rows",
        metavar="N",
        help="Rows shown per list (default: the measure's cutoff, 10 for ndcg@10; 10 for a "
        "measure without one). The measure is computed as always.",
        show_default=False,
    ),
    only: OnlyChoice | None = typer.Option(
        None, "--only", help="Show only the queries B loses, wins or ties.", show_default=False
    ),
    min_delta: float | None = typer.Option(
        None,
        "--min-delta",
        metavar="X",
        help="Show only the queries whose |Δ| is at least X.",
        show_default=False,
    ),
    category: list[str] = typer.Option(
        [],
        "--category",
        metavar="NAME",
        help="Show only this category's queries (repeatable): a benchmark's, or the `category` "
        "of --queries JSONL.",
        show_default=False,
    ),
    query_id: list[str] = typer.Option(
        [],
        "--query-id",
        metavar="ID",
        help="Show only this query (repeatable, or comma-separated).",
        show_default=False,
    ),
    limit: int | None = typer.Option(
        None, "--limit", metavar="N", help="Show the first N queries only.", show_default=False
    ),
    sort: SortChoice = typer.Option(
        SortChoice.change,
        "--sort",
        help="change: largest |Δ| first (losses first at equal |Δ|), ties last; delta: Δ "
        "ascending (largest loss first); query: by query id.",
    ),
    view: BenchViewOption = None,
    rel_level: RelLevelOption = 1,
    queries: Path | None = typer.Option(
        None,
        "--queries",
        metavar="FILE",
        help="Query texts: BEIR queries.jsonl (with `category`, categories too) or a TSV of id "
        "and text (a benchmark's come from its suite).",
        show_default=False,
    ),
    corpus: Path | None = typer.Option(
        None,
        "--corpus",
        metavar="FILE",
        help="Document titles and texts: BEIR corpus.jsonl (a benchmark's come from its suite).",
        show_default=False,
    ),
    pool_unjudged: Path | None = typer.Option(
        None,
        "--pool-unjudged",
        metavar="FILE",
        help="Write the unjudged documents in the rows shown of the queries shown as a pool "
        "for rankscope judge or annotators (.jsonl, .csv or .yaml; rankscope pool's format).",
        show_default=False,
    ),
    output_format: DiffFormat = typer.Option(
        Format.table, "--format", "-f", help="table, json or markdown."
    ),
) -> None:
    """Per-query differences between two runs, with both ranked lists side by side.

    The queries sorted by the change of a measure (biggest losses and wins first), each with
    both ranked lists side by side (document, title, grade or unjudged, its move between the
    lists) and the relevant documents neither shows.

    `rankscope diff OUT_DIR CONFIG_A CONFIG_B` compares two configurations of a benchmark,
    from its run files, categories and suite texts.
    """
    from rankscope.report import rundiff as render

    ids = [q.strip() for item in query_id for q in item.split(",") if q.strip()]
    if _is_benchmark(source, first, second):
        if rel_level != 1:
            raise InputError(
                "--rel-level applies to run files; a benchmark's relevance level was set when "
                "it ran (see evaluation in its results.json)",
                path=source,
            )
        diff = _diff_benchmark(source, first, second, measure, view, depth, queries, corpus, sort)
    else:
        if view is not None:
            raise InputError(
                "--view applies to a benchmark's results, not to run files",
                hint="usage: rankscope diff OUT_DIR CONFIG_A CONFIG_B --view all",
            )
        if pool_unjudged is not None and queries is None:
            raise InputError(
                "--pool-unjudged needs the query texts: run files hold only query ids, and a "
                "pool without the texts cannot be judged",
                hint="pass --queries queries.jsonl (BEIR) or a TSV of id<TAB>text",
            )
        diff = _diff_runs(source, first, second, measure, depth, rel_level, queries, corpus, sort)
    diff = diff.select(
        only=None if only is None else _OUTCOME[only.value],  # type: ignore[arg-type]
        min_delta=min_delta,
        categories=category,
        query_ids=ids,
        limit=limit,
    )
    if pool_unjudged is not None:
        _write_pool(diff, pool_unjudged)
    if output_format is Format.json:
        sys.stdout.write(render.to_json(diff) + "\n")
    elif output_format is Format.markdown:
        sys.stdout.write(render.to_markdown(diff))
    else:
        render.print_table(diff)


def _is_benchmark(source: Path, first: str, second: str) -> bool:
    """A folder, or a file given with two names that are not files: a benchmark's results."""
    if source.is_dir():
        return True
    return (
        source.is_file()
        and not Path(first).exists()
        and not Path(second).exists()
        and (source.suffix.lower() == ".json")
    )


def _diff_benchmark(
    source: Path,
    first: str,
    second: str,
    measure: str | None,
    view: View | None,
    depth: int | None,
    queries: Path | None,
    corpus: Path | None,
    sort: SortChoice,
) -> RunDiff:
    from rankscope.diff import diff_benchmark

    return diff_benchmark(
        source,
        first,
        second,
        measure,
        view=None if view is None else view.value,  # type: ignore[arg-type]
        depth=depth,
        queries=queries,
        corpus=_existing(corpus),
        sort=sort.value,  # type: ignore[arg-type]
    )


def _diff_runs(
    qrels: Path,
    first: str,
    second: str,
    measure: str | None,
    depth: int | None,
    rel_level: int,
    queries: Path | None,
    corpus: Path | None,
    sort: SortChoice,
) -> RunDiff:
    from rankscope.diff import diff_runs
    from rankscope.metrics.names import parse_measure

    wanted = measure or "ndcg@10"
    parse_measure(wanted)  # a bad name fails before any file is read
    for path in (qrels, Path(first), Path(second)):
        if not path.exists():
            raise InputError(
                "file not found",
                path=path,
                hint="usage: rankscope diff QRELS RUN_A RUN_B, or rankscope diff OUT_DIR "
                "CONFIG_A CONFIG_B for a benchmark's configurations",
            )
        if path.is_dir():
            raise InputError(
                "expected a file, got a directory",
                path=path,
                hint="usage: rankscope diff QRELS RUN_A RUN_B; a benchmark's output folder "
                "comes first: rankscope diff OUT_DIR CONFIG_A CONFIG_B",
            )
    texts = None
    categories = None
    if queries is not None:
        from rankscope.suite.corpus import read_queries

        found = read_queries(queries)
        texts = {q.id: q.text for q in found}
        categories = {q.id: q.category for q in found if q.category is not None}
    return diff_runs(
        qrels,
        first,
        second,
        wanted,
        depth=depth,
        rel_level=rel_level,
        queries=texts,
        categories=categories or None,
        corpus=_existing(corpus),
        sort=sort.value,  # type: ignore[arg-type]
    )


def _existing(corpus: Path | None) -> Path | None:
    if corpus is not None and not corpus.is_file():
        raise InputError("corpus file not found", path=corpus, hint="give a BEIR corpus.jsonl")
    return corpus


def _write_pool(diff: RunDiff, out: Path) -> None:
    from rankscope.diff import unjudged_pool
    from rankscope.judge.pool import pool_format, require_query_text, write_pool

    pool_format(out)  # a bad suffix fails before anything is written
    pool = unjudged_pool(diff)
    if not pool.entries:
        print(
            f"rankscope: no unjudged documents in the top {diff.depth} of the queries shown; "
            f"{out} not written",
            file=sys.stderr,
        )
        return
    require_query_text(pool)
    write_pool(pool, out)
    print(
        f"wrote {len(pool)} unjudged (query, document) pairs of {len(pool.query_ids)} queries "
        f"to {out} (judge them with rankscope judge {out} --out DIR)",
        file=sys.stderr,
    )


def register(app: typer.Typer) -> None:
    app.command("diff")(diff_command)
