"""Reports: comparison tables for the terminal, Markdown and JSON."""

from rankscope.report.bench import render_table, to_json, to_markdown

__all__ = ["render_table", "to_json", "to_markdown"]
