"""A benchmark report's tables for a paper: booktabs LaTeX (needs ``booktabs`` and ``amssymb``).

Two tables: the comparison (headline mean with its 95% interval, difference from the best with
its simultaneous interval, p-value, significance marks, p50 latency) and the headline per
category; the caption states n, the test, B and the seed.
"""

from __future__ import annotations

from rankscope.report.compare import latex_escape
from rankscope.report.content import ReportContent
from rankscope.report.tables import Table, category_table, comparison_table

#: the comparison table's columns kept for a paper (the latency comparison stays in the HTML)
PAPER_COLUMNS = 7


def _cell(text: str) -> str:
    text = latex_escape(text)
    text = text.replace("▼", r"$^{\blacktriangledown}$").replace("▲", r"$^{\blacktriangle}$")
    text = text.replace("Δ", r"$\Delta$").replace("<", r"$<$").replace("—", "--")
    return text.replace("≤", r"$\leq$")


def latex_table(table: Table, caption: str, label: str, columns: int | None = None) -> list[str]:
    """A booktabs table of the first ``columns`` columns, its highest numbers in bold."""
    width = columns or len(table.header)
    out = [
        r"\begin{table}[t]",
        r"\centering",
        r"\caption{" + _cell(caption) + "}",
        r"\label{" + label + "}",
        r"\begin{tabular}{l" + "r" * (width - 1) + "}",
        r"\toprule",
        " & ".join(_cell(h) for h in table.header[:width]) + r" \\",
        r"\midrule",
    ]
    for r, (name, cells) in enumerate(table.rows):
        texts = []
        for i, c in enumerate(cells[: width - 1]):
            text = _cell(c.text)
            texts.append(r"\textbf{" + text + "}" if table.is_top(r, i) else text)
        out.append(" & ".join([_cell(name), *texts]) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return out


def render_latex(content: ReportContent) -> str:
    suite = content.result.suite
    s = content.statistics
    out = [
        f"% {suite.name}: rankscope {content.result.rankscope_version}, {content.result.timestamp}"
    ]
    out.append(f"% {content.title}")
    if content.rows:
        caption = f"{suite.name}: {content.label} over {content.num_queries} queries"
        if content.compared and content.quality is not None:
            caption += (
                f". Mean with {s.level * 100:g}% t interval; difference from the best with "
                f"simultaneous interval and p-value ({content.quality.test_name}, B = "
                f"{s.resamples:,}, seed {s.seed}); ▼ significantly worse (p ≤ {s.alpha:g})"
            )
        out += latex_table(
            comparison_table(content), caption, "tab:rankscope-comparison", PAPER_COLUMNS
        )
    categories = category_table(content)
    if categories is not None:
        caption = f"{suite.name}: {content.label} per query category (queries in brackets)"
        out += latex_table(categories, caption, "tab:rankscope-categories")
    return "\n".join(out)


__all__ = ["latex_table", "render_latex"]
