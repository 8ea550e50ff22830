"""``rankscope compare``: is a difference between runs real? Intervals, paired tests, corrections.

Two forms: ``rankscope compare QRELS RUN RUN...`` (run files) and ``rankscope compare OUT_DIR``
(a benchmark's output folder or its results.json: its configurations, from the typed per-query
results). Parses options, makes one library call (:func:`rankscope.compare_io.compare_runs` or
:func:`rankscope.bench.statistics.compare_benchmark`), renders with :mod:`rankscope.report`'s
format modules. Output formats: ``table`` (default), ``json``
(:meth:`rankscope.stats.Comparison.to_dict`), ``csv`` (one row per measure and system),
``markdown`` and ``latex``. Warnings (few queries, zero variance, constant measures, runs lacking
many queries) go to stderr.
"""

from __future__ import annotations

import os
import sys
import warnings
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import typer

from rankscope.cli.options import DepthOption, Format, JudgedOnlyOption, RelLevelOption, View
from rankscope.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.stats import Comparison

CompareFormat = Literal[Format.table, Format.json, Format.csv, Format.markdown, Format.latex]

# What a command runs on is imported inside it: every command module loads at start-up
# (cli/app.py), and numpy, pyarrow, pydantic and the rest only with the command that runs.

_MEASURE_HELP = (
    "Measure to compare; repeat for several (default: ndcg@10 and map). Any name rankscope "
    "eval accepts (ndcg@10, map, P@10, recall@100, mrr, ...)."
)


class TestChoice(StrEnum):
    t = "t"
    randomization = "randomization"
    bootstrap = "bootstrap"
    wilcoxon = "wilcoxon"
    sign = "sign"
    tukey = "tukey"
    rtukey = "rtukey"


class CorrectionChoice(StrEnum):
    holm = "holm"
    bonferroni = "bonferroni"
    bh = "bh"
    none = "none"


class FamilyChoice(StrEnum):
    measure = "measure"
    all = "all"


def compare_command(
    qrels: Path = typer.Argument(
        ...,
        metavar="QRELS|OUT_DIR",
        help="Relevance judgments (TREC qrels, BEIR TSV, ...), or a benchmark's output folder "
        "or results.json (then no run files).",
        show_default=False,
    ),
    runs: list[Path] = typer.Argument(
        None, metavar="RUN", help="Two or more run files (TREC, JSONL, CSV, ...)."
    ),
    measure: list[str] = typer.Option(
        [], "--measure", "-m", metavar="MEASURE", help=_MEASURE_HELP, show_default=False
    ),
    baseline: str | None = typer.Option(
        None,
        "--baseline",
        "-b",
        metavar="NAME",
        help="The run the others are compared with: its name, file name or path "
        "(default: the first run); for a benchmark, a configuration name.",
    ),
    view: View | None = typer.Option(
        None,
        "--view",
        help="Benchmark only: compare over the judged queries every configuration answered "
        "(answered, the default, as the bench table) or every judged query, a skipped one "
        "scoring 0 (all).",
        show_default=False,
    ),
    test: TestChoice = typer.Option(
        TestChoice.t,
        "--test",
        "-t",
        metavar="TEST",
        help="t: paired t-test; randomization: Fisher's sign-flip test (exact for n <= 30); "
        "bootstrap: studentized paired bootstrap; wilcoxon: signed-rank; sign: sign test; "
        "tukey: Tukey HSD with queries as blocks; rtukey: randomised Tukey HSD.",
    ),
    correction: CorrectionChoice = typer.Option(
        CorrectionChoice.holm,
        "--correction",
        help="Multiple-comparison correction of the comparisons with the baseline "
        "(not applied to tukey/rtukey, which control all pairs themselves).",
    ),
    family: FamilyChoice = typer.Option(
        FamilyChoice.measure,
        "--family",
        help="Which p-values are corrected together: each measure's comparisons (measure) "
        "or every system × measure (all).",
    ),
    alpha: float = typer.Option(
        0.05, "--alpha", metavar="ALPHA", help="Significance level; intervals are at 1 - alpha."
    ),
    seed: int = typer.Option(
        0, "--seed", metavar="N", help="Seed of the randomization/bootstrap draws."
    ),
    resamples: int = typer.Option(
        10_000,
        "--resamples",
        "-B",
        metavar="N",
        help="Draws for randomization, bootstrap and rtukey.",
    ),
    all_pairs: bool = typer.Option(
        False, "--all-pairs", help="Also test every pair of runs (always shown for tukey/rtukey)."
    ),
    queries_needed: bool = typer.Option(
        False,
        "--queries-needed",
        help="Print planning figures: queries needed to detect the difference with power 0.8, "
        "and the smallest difference detectable with the queries you have.",
    ),
    delta: float | None = typer.Option(
        None,
        "--delta",
        metavar="DELTA",
        help="Difference to plan for with --queries-needed (default: observed).",
    ),
    power: float = typer.Option(
        0.8, "--power", metavar="POWER", help="Power to plan for (--queries-needed)."
    ),
    depth: DepthOption = None,
    rel_level: RelLevelOption = 1,
    judged_only: JudgedOnlyOption = False,
    output_format: CompareFormat = typer.Option(
        Format.table, "--format", "-f", help="table, json, csv, markdown or latex."
    ),
    wide: bool = typer.Option(
        False, "--wide", help="Print every column of the tables, however wide the terminal."
    ),
) -> None:
    """Is a difference between runs real? Intervals, paired tests, corrected p-values.

    Compares runs on the qrels' queries: means with confidence intervals, differences from a
    baseline with intervals, effect sizes, corrected p-values, wins/ties/losses.
    `rankscope compare OUT_DIR` compares a benchmark's configurations the same way, from its
    results.json (default measures: the headline and MAP; `-m latency` for per-query latency).
    """
    from rankscope.report import render_table, to_csv, to_json, to_latex, to_markdown

    runs = list(runs or [])
    options = {
        "test": test.value,
        "correction": correction.value,
        "family": family.value,
        "alpha": alpha,
        "seed": seed,
        "resamples": resamples,
        "all_pairs": all_pairs,
        "power": power,
        "delta": delta,
    }
    if _is_benchmark(qrels, runs):
        if depth is not None or rel_level != 1 or judged_only:
            raise InputError(
                "--depth, --rel-level and --judged-only apply to run files; a benchmark's "
                "measures were computed when it ran (see evaluation in its results.json)",
                path=qrels,
            )
        comparison = _compare_benchmark(qrels, measure, view, baseline, options)
    else:
        if view is not None:
            raise InputError(
                "--view applies to a benchmark's results, not to run files",
                hint="usage: rankscope compare OUT_DIR --view all",
            )
        comparison = _compare_runs(
            qrels, runs, measure, baseline, depth, rel_level, judged_only, options
        )
    if output_format is Format.json:
        sys.stdout.write(to_json(comparison) + "\n")
    elif output_format is Format.csv:
        sys.stdout.write(to_csv(comparison))
    elif output_format is Format.markdown:
        sys.stdout.write(to_markdown(comparison, plan=queries_needed, delta=delta))
    elif output_format is Format.latex:
        sys.stdout.write(to_latex(comparison))
    else:
        from rich.console import Console

        # a terminal, or COLUMNS naming a width: fit the tables to it; a pipe or a file gets
        # every column unwrapped
        fit = not wide and (sys.stdout.isatty() or os.environ.get("COLUMNS", "").isdigit())
        console = Console(highlight=False, soft_wrap=False)
        render_table(comparison, console, plan=queries_needed, delta=delta, fit=fit)
    for note in comparison.warnings:
        print(f"rankscope: warning: {note}", file=sys.stderr)


def _is_benchmark(path: Path, runs: list[Path]) -> bool:
    """A folder or a ``.json`` file given alone: a benchmark's results."""
    return not runs and (path.is_dir() or path.suffix.lower() == ".json")


def _compare_benchmark(
    path: Path,
    measure: list[str],
    view: View | None,
    baseline: str | None,
    options: dict[str, Any],
) -> Comparison:
    from rankscope.bench.results import read_results
    from rankscope.bench.statistics import compare_benchmark
    from rankscope.stats import StatsWarning

    result = read_results(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatsWarning)  # printed from the result
        return compare_benchmark(
            result,
            measure or None,
            view=None if view is None else view.value,  # type: ignore[arg-type]
            baseline=baseline,
            **options,
        )


def _compare_runs(
    qrels: Path,
    runs: list[Path],
    measure: list[str],
    baseline: str | None,
    depth: int | None,
    rel_level: int,
    judged_only: bool,
    options: dict[str, Any],
) -> Comparison:
    from rankscope.compare_io import compare_runs
    from rankscope.metrics.names import parse_measures
    from rankscope.stats import StatsWarning

    measures = parse_measures(measure or ["ndcg@10", "map"])  # fail fast on a bad name
    for path in (qrels, *runs):
        if not path.exists():
            raise InputError("file not found", path=path, hint="Check the path and try again")
        if path.is_dir():
            raise InputError(
                "expected a file, got a directory",
                path=path,
                hint="usage: rankscope compare QRELS RUN RUN [RUN...]; a benchmark's output "
                "folder is compared on its own: rankscope compare OUT_DIR",
            )
    if len(runs) < 2:
        raise InputError(
            "compare needs at least two runs",
            value=[str(r) for r in runs],
            hint="usage: rankscope compare QRELS RUN RUN [RUN...], or rankscope compare OUT_DIR "
            "for a benchmark's results",
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatsWarning)  # printed from the result
        return compare_runs(
            qrels,
            runs,
            measures,
            depth=depth,
            rel_level=rel_level,
            judged_only=judged_only,
            baseline=baseline,
            **options,
        )


def register(app: typer.Typer) -> None:
    app.command("compare")(compare_command)
