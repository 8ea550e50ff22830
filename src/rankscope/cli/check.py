"""``rankscope check``: a regression gate for CI. Is the candidate non-inferior to the baseline
on each measure, on one query set? Exit 0 pass, 1 regression, 2 usage or input error.

Three forms: ``rankscope check QRELS BASELINE_RUN CANDIDATE_RUN``, ``rankscope check OUT_DIR
BASELINE CANDIDATE`` (a benchmark's output folder or results.json, two configurations), and
``rankscope check SUITE_FILE`` (its ``check:`` section, on the benchmark's output folder).
Parses options, makes one library call (:func:`rankscope.check.check`), renders with
:mod:`rankscope.check.render`; ``--markdown`` and ``$GITHUB_STEP_SUMMARY`` get the Markdown.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from rankscope.cli.options import BenchViewOption, RelLevelOption
from rankscope.errors import InputError

# What a command runs on is imported inside it: every command module loads at start-up
# (cli/app.py), and numpy and the rest only with the command that runs.


def check_command(
    source: Path = typer.Argument(
        ...,
        metavar="QRELS|OUT_DIR|SUITE_FILE",
        help="Relevance judgments; or a benchmark's output folder or results.json; or a suite "
        "file with a check: section.",
        show_default=False,
    ),
    baseline: str | None = typer.Argument(
        None,
        metavar="BASELINE",
        help="The production run file, or the benchmark's baseline configuration.",
        show_default=False,
    ),
    candidate: str | None = typer.Argument(
        None,
        metavar="CANDIDATE",
        help="The candidate run file or configuration; Δ = candidate - baseline.",
        show_default=False,
    ),
    measure: list[str] = typer.Option(
        [],
        "--measure",
        "-m",
        metavar="MEASURE",
        help="A measure to check (repeatable; default: ndcg@10, a benchmark's headline, or "
        "the suite's check: measures).",
        show_default=False,
    ),
    margin: float | None = typer.Option(
        None,
        "--margin",
        metavar="X",
        help="Fail when the one-sided lower bound of Δ is below -X.",
        show_default="0.01",
    ),
    alpha: float | None = typer.Option(
        None,
        "--alpha",
        metavar="A",
        help="The bound is one-sided at confidence 1 - A.",
        show_default="0.05",
    ),
    floor: list[str] = typer.Option(
        [],
        "--min",
        metavar="MEASURE=VALUE",
        help="Also fail when the candidate's mean is below VALUE (repeatable).",
        show_default=False,
    ),
    view: BenchViewOption = None,
    out: Path | None = typer.Option(
        None,
        "--out",
        "-o",
        metavar="DIR",
        help="Suite file only: the benchmark's output folder.",
        show_default="rankscope-out/<suite name>",
    ),
    markdown: Path | None = typer.Option(
        None,
        "--markdown",
        metavar="FILE",
        help="Also write a Markdown summary (a pull request comment) here; it is appended to "
        "$GITHUB_STEP_SUMMARY when that is set.",
        show_default=False,
    ),
    rel_level: RelLevelOption = 1,
) -> None:
    """Fail when a candidate is worse than the baseline beyond a margin (a CI gate).

    Per measure, a non-inferiority test on one query set: fail when the one-sided (1 - alpha)
    lower bound of Δ = candidate - baseline (paired t) is below -margin, or when the
    candidate's mean is below a --min floor. Prints each decision and the queries the
    candidate lost most on. Exit status: 0 pass, 1 regression, 2 usage or input error.
    """
    from rankscope.check import check, parse_floors, render_markdown, render_text

    result = check(
        source,
        baseline,
        candidate,
        measure,
        margin=margin,
        alpha=alpha,
        floors=parse_floors(floor) if floor else None,
        view=None if view is None else view.value,  # type: ignore[arg-type]
        out=out,
        rel_level=rel_level,
    )
    sys.stdout.write(render_text(result))
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if markdown is not None or summary:
        text = render_markdown(result)
        for path, mode in ((markdown, "w"), (summary and Path(summary), "a")):
            if not path:
                continue
            try:
                with open(path, mode, encoding="utf-8") as handle:
                    handle.write(text)
            except OSError as error:
                raise InputError(
                    f"cannot write the Markdown summary: {error.strerror}", path=path
                ) from None
        if markdown is not None:
            print(f"wrote {markdown}", file=sys.stderr)
    raise typer.Exit(result.exit_code)


def register(app: typer.Typer) -> None:
    app.command("check")(check_command)
