"""``rankscope report``: a benchmark's results as a self-contained HTML report, and Markdown and
LaTeX tables. Parses options, calls :func:`rankscope.report.write.write_report`, says what it
wrote."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import typer

from rankscope.cli.options import View

# What a command runs on is imported inside it: every command module loads at start-up
# (cli/app.py), and numpy, pyarrow, pydantic and the rest only with the command that runs.


def report_command(
    source: Path = typer.Argument(
        ...,
        metavar="OUT_DIR",
        help="A benchmark's output folder, or its results.json.",
        show_default=False,
    ),
    html: Path | None = typer.Option(
        None,
        "--html",
        metavar="FILE",
        help="Write the HTML report here.",
        show_default="report.html beside results.json, when no other output is named",
    ),
    markdown: Path | None = typer.Option(
        None,
        "--md",
        metavar="FILE",
        help="Write Markdown tables here ('-': standard output).",
        show_default=False,
    ),
    latex: Path | None = typer.Option(
        None,
        "--latex",
        metavar="FILE",
        help="Write LaTeX (booktabs) tables here ('-': standard output).",
        show_default=False,
    ),
    view: View | None = typer.Option(
        None,
        "--view",
        help="answered (default): the judged queries every configuration answered; all: every "
        "judged query, a skipped one scoring 0.",
        show_default=False,
    ),
) -> None:
    """Write a benchmark's report: one HTML file, and Markdown and LaTeX tables.

    The report: comparison table with confidence intervals, forest plot of the differences from
    the best, per-query differences, the queries that moved (both ranked lists, click to open),
    quality against latency with the Pareto front, per-category results (one HTML file, no
    network needed to view it).
    """
    from rich.console import Console

    from rankscope.report.write import write_report

    # the statistics and figures take a while (tens of seconds for dozens of configurations):
    # say so on a terminal rather than sit silent
    err = Console(stderr=True)
    with (
        err.status("Building the report: statistics and figures...")
        if err.is_terminal
        else (contextlib.nullcontext())
    ):
        written = write_report(
            source,
            html=html,
            markdown=markdown,
            latex=latex,
            view=None if view is None else view.value,  # type: ignore[arg-type]
        )
    for kind in ("markdown", "latex", "html"):
        if kind in written.text:
            sys.stdout.write(written.text[kind])
    for path in (written.html, written.markdown, written.latex):
        if path is not None:
            print(f"wrote {path}", file=sys.stderr)


def register(app: typer.Typer) -> None:
    app.command("report")(report_command)
