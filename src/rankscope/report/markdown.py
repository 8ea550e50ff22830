"""A benchmark report as Markdown: the comparison table with intervals and p-values, the
per-category table, the recommendations and how everything was computed (for a README, an
issue or a paper's supplement). Figures are in the HTML report."""

from __future__ import annotations

from rankscope.report.content import ReportContent
from rankscope.report.tables import Table, category_table, comparison_table, measures_table


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def markdown_table(table: Table) -> list[str]:
    """The table in Markdown, its highest numbers (``table.best``) in bold."""
    lines = [_row(table.header), "|" + "|".join(["---"] + ["---:"] * (len(table.header) - 1)) + "|"]
    for r, (name, cells) in enumerate(table.rows):
        texts = [f"**{c.text}**" if table.is_top(r, i) else c.text for i, c in enumerate(cells)]
        lines.append(_row([name, *texts]))
    return lines


def render_markdown(content: ReportContent, folder: str = "<output folder>") -> str:
    suite = content.result.suite
    out = [f"# {suite.name}: benchmark report", ""]
    if suite.description:
        out += [suite.description, ""]
    out += [
        f"rankscope {content.result.rankscope_version}, {content.result.timestamp}, view "
        f"`{content.view}`: {content.title}.",
        "",
        "## Comparison",
        "",
    ]
    if content.rows:
        out += [*markdown_table(comparison_table(content)), ""]
    out += [
        content.test_text() + " ▼ significantly worse than the best (or the fastest), ▲ "
        "significantly better.",
        "",
    ]
    command = content.command(folder)
    if command:
        out += [f"Recompute: `{command}`", ""]
    if content.recommendations:
        out += ["## Recommendations", ""]
        out += [f"- **{t}**: `{c}` ({r})" for t, c, r in content.recommendations]
        out.append("")
    categories = category_table(content)
    if categories is not None:
        out += [f"## Per category: {content.label}", "", *markdown_table(categories), ""]
    if content.rows:
        out += [f"## Every measure ({content.num_queries} queries)", ""]
        out += [*markdown_table(measures_table(content)), ""]
    notes = [f"- FAILED {n}: {e}" for n, e in content.failures]
    notes += [f"- {n}" for n in content.other_notes()]
    if notes:
        out += ["## Notes", "", *notes, ""]
    return "\n".join(out).rstrip() + "\n"


__all__ = ["markdown_table", "render_markdown"]
