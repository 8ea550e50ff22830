"""Write a benchmark's report files: :func:`write_report` is what ``rankscope report`` calls."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rankscope.bench.results import BenchmarkResult, ViewName, read_results
from rankscope.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.report.content import ReportContent

#: configurations whose per-query diffs the HTML report shows (as many as its figure's panels)
MAX_DIFF_CONFIGURATIONS = 12


@dataclass(frozen=True)
class Written:
    """What :func:`write_report` produced: the files (or ``-``, standard output) per format."""

    html: Path | None
    markdown: Path | None
    latex: Path | None
    text: dict[str, str]


def write_report(
    source: str | os.PathLike[str] | BenchmarkResult,
    *,
    html: str | os.PathLike[str] | None = None,
    markdown: str | os.PathLike[str] | None = None,
    latex: str | os.PathLike[str] | None = None,
    view: ViewName | None = None,
) -> Written:
    """Render a benchmark's results (an output folder, its results.json, or the value) as
    HTML, Markdown and/or LaTeX. With no target at all, the HTML goes to ``report.html``
    beside results.json. A target ``-`` is not written: its text is in ``Written.text``."""
    from rankscope.report.content import build

    folder: Path | None = None
    if isinstance(source, BenchmarkResult):
        result = source
    else:
        path = Path(source)
        folder = path if path.is_dir() else path.parent
        result = read_results(path)
    if html is None and markdown is None and latex is None:
        if folder is None:
            raise InputError("name a file to write: html, markdown or latex")
        html = folder / "report.html"
    content = build(result, view)
    if folder is not None and html is not None:
        content = with_query_diffs(content, folder)
    shown = str(folder) if folder is not None else "<output folder>"
    text: dict[str, str] = {}
    paths: dict[str, Path | None] = {"html": None, "markdown": None, "latex": None}
    for kind, target in (("html", html), ("markdown", markdown), ("latex", latex)):
        if target is None:
            continue
        rendered = _render(kind, content, shown)
        if str(target) == "-":
            text[kind] = rendered
            continue
        out = Path(target)
        if out.is_dir():
            raise InputError("expected a file name, got a folder", path=out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(rendered, encoding="utf-8")
        paths[kind] = out
    return Written(paths["html"], paths["markdown"], paths["latex"], text)


def with_query_diffs(content: ReportContent, folder: Path) -> ReportContent:
    """``content`` with each configuration's per-query diff from the best (the closest to the
    best first, at most :data:`MAX_DIFF_CONFIGURATIONS`), read from the run files in
    ``folder``."""
    from dataclasses import replace

    from rankscope.report.diffs import report_diffs

    quality = content.quality
    if quality is None or not quality.compared or content.baseline is None:
        return content
    order = {r.system: -(r.delta or 0.0) for r in quality.rows}
    others = sorted(
        (r.name for r in content.rows if r.name != content.baseline),
        key=lambda name: order.get(name, 0.0),
    )[:MAX_DIFF_CONFIGURATIONS]
    diffs, notes = report_diffs(content.result, folder, content.baseline, others, content.view)
    return replace(content, query_diffs=diffs, query_diff_notes=notes)


def _render(kind: str, content: object, folder: str) -> str:
    from rankscope.report.content import ReportContent

    assert isinstance(content, ReportContent)
    if kind == "html":
        from rankscope.report.html import to_html

        return to_html(content, folder)
    if kind == "markdown":
        from rankscope.report.markdown import to_markdown

        return to_markdown(content, folder=folder)
    from rankscope.report.latex import to_latex

    return to_latex(content)


__all__ = ["Written", "write_report"]
