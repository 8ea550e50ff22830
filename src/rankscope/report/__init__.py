"""Reports: comparison tables for the terminal, Markdown and JSON (:mod:`.bench`,
:mod:`.compare`), and a benchmark's full report (:func:`write_report`): one self-contained HTML
file (:mod:`.html`, figures in :mod:`.figures`), Markdown (:mod:`.markdown`) and LaTeX
(:mod:`.latex`) tables, all from the same content (:mod:`.content`, :mod:`.tables`)."""

from rankscope.report.bench import render_table, to_json, to_markdown
from rankscope.report.write import Written, write_report

__all__ = ["Written", "render_table", "to_json", "to_markdown", "write_report"]
