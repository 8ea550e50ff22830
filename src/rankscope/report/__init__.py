"""Reports: what is shown, once per value, and one module per output format.

The values: a :class:`~rankscope.stats.Comparison` (:mod:`.compare` says what its tables show), a
benchmark's :class:`~rankscope.bench.BenchmarkResult` (:mod:`.bench`: its comparison table) and
a benchmark report's :class:`~rankscope.report.content.ReportContent` (:mod:`.content`,
:mod:`.tables`; figures in :mod:`.figures`). The formats, each one module over those values:
:mod:`.terminal` (:func:`render_table`, :func:`to_text`), :mod:`.markdown` (:func:`to_markdown`),
:mod:`.latex` (:func:`to_latex`), :mod:`.csv` (:func:`to_csv`), :mod:`.json` (:func:`to_json`)
and :mod:`.html`; numbers and marks are shown by :mod:`.numbers`. :func:`write_report` writes a
benchmark's full report: one self-contained HTML file, Markdown and LaTeX.
"""

from typing import TYPE_CHECKING

from rankscope.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.report.csv import to_csv
    from rankscope.report.json import to_json
    from rankscope.report.latex import to_latex
    from rankscope.report.markdown import to_markdown
    from rankscope.report.terminal import render_table, to_text
    from rankscope.report.write import Written, write_report

__all__ = [
    "Written",
    "render_table",
    "to_csv",
    "to_json",
    "to_latex",
    "to_markdown",
    "to_text",
    "write_report",
]

# The names load on first use (rankscope.lazy): rankscope eval renders its Results through
# rankscope.report.results without importing the benchmark's formats.
__getattr__, __dir__ = lazy_exports(globals())
