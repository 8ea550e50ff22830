"""LaTeX for a paper: booktabs tables (they need ``booktabs`` and ``amssymb``).

:func:`to_latex` writes a :class:`~rankscope.stats.Comparison` (its header as comments, one
table per measure) or a benchmark report's :class:`~rankscope.report.content.ReportContent`: two
tables, the comparison (headline mean with its 95% interval, difference from the best with its
simultaneous interval, p-value, significance marks, p50 latency) and the headline per category;
the caption states n, the test, B and the seed. Every cell is escaped by one function.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, overload

from rankscope.report import compare
from rankscope.report.content import ReportContent
from rankscope.report.numbers import BETTER, WORSE
from rankscope.report.tables import Table, category_table, comparison_table

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.stats import Comparison

#: the report's comparison table: the columns kept for a paper (latency stays in the HTML)
PAPER_COLUMNS = 7

_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


@overload
def to_latex(value: Comparison) -> str: ...
@overload
def to_latex(value: ReportContent) -> str: ...
def to_latex(value: Comparison | ReportContent) -> str:
    """``value`` as booktabs tables: a comparison, one table per measure; a report, its
    comparison and per-category tables."""
    if isinstance(value, ReportContent):
        return _report(value)
    return _comparison(value)


def latex_escape(text: str) -> str:
    return "".join(_ESCAPES.get(ch, ch) for ch in text)


def _cell(text: str) -> str:
    text = latex_escape(text)
    text = text.replace(WORSE, r"$^{\blacktriangledown}$").replace(BETTER, r"$^{\blacktriangle}$")
    text = text.replace("Δ", r"$\Delta$").replace("<", r"$<$").replace("—", "--")
    return text.replace("≤", r"$\leq$")


# ----------------------------------------------------------------------------- a comparison
def _comparison(comparison: Comparison) -> str:
    c = comparison
    out = [f"% {line}" for line in compare.header_lines(c)]
    for m in c.measures:
        header = compare.columns(c)
        out += [
            r"\begin{table}[t]",
            r"\centering",
            r"\caption{" + latex_escape(m.measure) + f", {c.queries} queries" + "}",
            r"\begin{tabular}{l" + "r" * (len(header) - 1) + "}",
            r"\toprule",
            " & ".join(_cell(h) for h in header) + r" \\",
            r"\midrule",
        ]
        for texts, _ in compare.cells(c, m):
            out.append(" & ".join(_cell(text) for text in texts) + r" \\")
        out += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(out)


# ----------------------------------------------------------------------------- a report
def _table(table: Table, caption: str, label: str, columns: int | None = None) -> list[str]:
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


def _report(content: ReportContent) -> str:
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
        out += _table(comparison_table(content), caption, "tab:rankscope-comparison", PAPER_COLUMNS)
    categories = category_table(content)
    if categories is not None:
        caption = f"{suite.name}: {content.label} per query category (queries in brackets)"
        out += _table(categories, caption, "tab:rankscope-categories")
    return "\n".join(out)


__all__ = ["latex_escape", "to_latex"]
