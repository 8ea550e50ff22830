"""Render a :class:`~rankscope.stats.Comparison`: terminal table, Markdown, LaTeX, CSV, JSON.

Every format shows, per measure and system: the mean with its interval, the difference from the
baseline with its interval, the effect size, the (corrected) p-value, wins/ties/losses and a mark
for a significant difference (▲ better, ▼ worse; ``$\\blacktriangle$``/``$\\blacktriangledown$``
in LaTeX); and above the tables the test, the correction and its family, the number of queries
and the filled/dropped counts. CSV and JSON carry every number at full precision.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterator

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from rankscope.stats.compare import CORRECTION_NAMES, TEST_NAMES, Comparison, MeasureComparison
from rankscope.stats.intervals import Interval

BETTER = "▲"
WORSE = "▼"


# ----------------------------------------------------------------------------- numbers
def fmt_value(value: float | None, digits: int = 4, signed: bool = False) -> str:
    """A number as tables show it: fixed decimals, ``+inf``/``-inf``, ``—`` for none."""
    if value is None:
        return "—"
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    if round(value, digits) == 0:
        value = 0.0  # no "-0.0000"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def fmt_p(p: float | None) -> str:
    """A p-value: 4 decimals, ``<0.0001`` below that."""
    if p is None:
        return "—"
    return "<0.0001" if p < 0.00005 else f"{p:.4f}"


def fmt_interval(interval: Interval | None, signed: bool = False) -> str:
    if interval is None:
        return "—"
    return f"[{fmt_value(interval.low, signed=signed)}, {fmt_value(interval.high, signed=signed)}]"


def _mark(direction: str | None) -> str:
    return BETTER if direction == "better" else WORSE if direction == "worse" else ""


def _level(comparison: Comparison) -> str:
    return f"{comparison.level * 100:g}%"


def header_lines(comparison: Comparison) -> list[str]:
    """What every format states above its tables: queries, test, correction, marks."""
    c = comparison
    test = TEST_NAMES[c.test]
    if c.test == "randomization":
        test += f", exact (all 2^{c.queries} sign flips)" if c.exact else f", B = {c.resamples:,}"
    elif c.test in ("bootstrap", "rtukey"):
        test += f", B = {c.resamples:,}"
    if c.test in ("randomization", "bootstrap", "rtukey") and not c.exact:
        test += f", seed {c.seed}"
    if c.correction == "tukey":
        control = f"family-wise error controlled over {c.family}"
        significant = f"p <= {c.alpha:g}"
    elif c.correction == "none":
        control = f"no correction (family: {c.family})"
        significant = f"p <= {c.alpha:g}, uncorrected"
    else:
        control = f"{CORRECTION_NAMES[c.correction]} correction over {c.family}"
        significant = f"{CORRECTION_NAMES[c.correction]}-corrected p <= {c.alpha:g}"
    lines = [
        f"{c.queries} queries: {_query_set(c)}",
        f"{test}; {control}; alpha {c.alpha:g}",
        f"{BETTER}/{WORSE} significantly better/worse than {c.baseline} ({significant}); "
        f"ES = {c.effect_size}; {_level(c)} intervals (Δ: {c.delta_interval})",
    ]
    # where a lower value is better (a benchmark's per-query latency), ▲ marks a lower one
    lower = [m.measure for m in c.measures if not m.quantity.higher_is_better]
    if lower:
        lines.append(
            f"{', '.join(lower)}: lower is better ({BETTER} marks a lower value; W/T/L: queries "
            "where it is lower/equal/higher)"
        )
    return lines


def _query_set(c: Comparison) -> str:
    filled = [f"{s} {n}" for s, n in zip(c.systems, c.filled, strict=True) if n]
    dropped = [f"{s} {n}" for s, n in zip(c.systems, c.dropped, strict=True) if n]
    if c.query_set == "qrels":
        where = "every judged query"
    elif " " in c.query_set:  # already a description (a benchmark's view)
        where = c.query_set
    else:
        where = f"the {c.query_set} queries"
    return (
        f"{where}; lacked by a run, scored 0: {', '.join(filled) if filled else 'none'}; "
        f"unjudged, dropped: {', '.join(dropped) if dropped else 'none'}"
    )


def _columns(c: Comparison) -> list[str]:
    p_name = "p" if c.correction in ("none", "tukey") else f"p ({CORRECTION_NAMES[c.correction]})"
    return [
        "system",
        "mean",
        f"{_level(c)} CI",
        f"Δ vs {c.baseline}",
        f"{_level(c)} CI of Δ",
        "ES",
        p_name,
        "W/T/L",
    ]


def _cells(c: Comparison, m: MeasureComparison) -> Iterator[tuple[list[str], str | None]]:
    for r in m.rows:
        if r.is_baseline:
            yield (
                [
                    f"{r.system} (baseline)",
                    fmt_value(r.mean),
                    fmt_interval(r.mean_interval),
                    "",
                    "",
                    "",
                    "",
                    "",
                ],
                None,
            )
            continue
        yield (
            [
                r.system,
                fmt_value(r.mean),
                fmt_interval(r.mean_interval),
                f"{fmt_value(r.delta, signed=True)} {_mark(r.direction)}".rstrip(),
                fmt_interval(r.delta_interval, signed=True),
                fmt_value(r.effect_size, 2, signed=True),
                fmt_p(r.p_adjusted),
                f"{r.wins}/{r.ties}/{r.losses}",
            ],
            r.direction,
        )


def _anova_line(m: MeasureComparison) -> str:
    a = m.anova
    return (
        f"Two-way ANOVA (systems × queries): F({a.df_systems}, {a.df_residual}) = "
        f"{fmt_value(a.f, 3)}, p = {fmt_p(a.p_value)}"
    )


def _pair_rows(c: Comparison, m: MeasureComparison) -> list[list[str]]:
    if m.pairs is None:
        return []
    rows = []
    higher = m.quantity.higher_is_better
    for p in m.pairs.pairs:
        mark = ""
        if p.p_adjusted <= c.alpha and p.delta != 0:
            mark = BETTER if (p.delta > 0) == higher else WORSE
        rows.append(
            [
                f"{c.systems[p.first]} - {c.systems[p.second]}",
                f"{fmt_value(p.delta, signed=True)} {mark}".rstrip(),
                fmt_interval(p.interval, signed=True),
                fmt_value(p.effect_size, 2, signed=True),
                fmt_p(p.p_adjusted),
            ]
        )
    return rows


def _pair_columns(c: Comparison) -> list[str]:
    simultaneous = c.test in ("tukey", "rtukey")
    return [
        "pair",
        "Δ",
        f"{_level(c)} {'simultaneous ' if simultaneous else ''}CI",
        "ES",
        "p" if c.correction in ("none", "tukey") else f"p ({CORRECTION_NAMES[c.correction]})",
    ]


def _plan_columns(c: Comparison, plan_delta: str) -> list[str]:
    power = next((r.plan.power for m in c.measures for r in m.rows if r.plan), 0.8)
    return [
        "system",
        "sd(d)",
        plan_delta,
        f"queries needed (power {power:g})",
        f"detectable Δ with {c.queries} queries",
    ]


def _plan_rows(m: MeasureComparison) -> list[list[str]]:
    rows = []
    for r in m.rows:
        if r.plan is None:
            continue
        needed = "—" if r.plan.queries_needed is None else f"{r.plan.queries_needed:,}"
        rows.append(
            [
                r.system,
                fmt_value(r.plan.sd_difference),
                fmt_value(r.plan.delta),
                needed,
                fmt_value(r.plan.min_detectable_delta),
            ]
        )
    return rows


def _plan_delta_label(c: Comparison, delta: float | None) -> str:
    return "Δ (observed)" if delta is None else "Δ"


# ----------------------------------------------------------------------------- terminal
def render_table(
    comparison: Comparison, *, plan: bool = False, delta: float | None = None
) -> RenderableType:
    """A rich renderable: the header, then one table per measure (and its pairs and plan)."""
    c = comparison
    parts: list[RenderableType] = [Text(line, style="dim") for line in header_lines(c)]
    for m in c.measures:
        table = Table(title=m.measure, title_justify="left", show_edge=False)
        for i, name in enumerate(_columns(c)):
            table.add_column(name, justify="left" if i == 0 else "right")
        for cells, direction in _cells(c, m):
            style = "green" if direction == "better" else "red" if direction == "worse" else None
            table.add_row(*cells, style=style)
        parts.extend([Text(""), table])
        if len(c.systems) > 2:
            parts.append(Text(_anova_line(m), style="dim"))
        pair_rows = _pair_rows(c, m)
        if pair_rows and len(c.systems) > 2:
            pairs = Table(title=f"{m.measure}: all pairs", title_justify="left", show_edge=False)
            for i, name in enumerate(_pair_columns(c)):
                pairs.add_column(name, justify="left" if i == 0 else "right")
            for row in pair_rows:
                pairs.add_row(*row)
            parts.extend([Text(""), pairs])
        if plan:
            planning = Table(
                title=f"{m.measure}: planning (paired t)", title_justify="left", show_edge=False
            )
            for i, name in enumerate(_plan_columns(c, _plan_delta_label(c, delta))):
                planning.add_column(name, justify="left" if i == 0 else "right")
            for row in _plan_rows(m):
                planning.add_row(*row)
            parts.extend([Text(""), planning])
    return Group(*parts)


def table_width(renderable: RenderableType) -> int:
    """The width a renderable needs to print without wrapping any cell."""
    return Console(width=10_000).measure(renderable).maximum


def print_table(
    comparison: Comparison,
    console: Console | None = None,
    *,
    plan: bool = False,
    delta: float | None = None,
) -> None:
    """Print :func:`render_table`, widening the console so that no cell wraps."""
    renderable = render_table(comparison, plan=plan, delta=delta)
    console = console or Console(highlight=False, soft_wrap=False)
    needed = table_width(renderable)
    if console.width < needed:
        console.width = needed
    console.print(renderable)


def to_text(comparison: Comparison, *, plan: bool = False, delta: float | None = None) -> str:
    """The terminal table as plain text (no colour, no wrapping)."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=80, color_system=None, highlight=False, soft_wrap=False)
    print_table(comparison, console, plan=plan, delta=delta)
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()) + "\n"


# ----------------------------------------------------------------------------- markdown
def _md_row(cells: list[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    align = ["---"] + ["---:"] * (len(header) - 1)
    return [_md_row(header), "|" + "|".join(align) + "|", *(_md_row(r) for r in rows)]


def to_markdown(comparison: Comparison, *, plan: bool = False, delta: float | None = None) -> str:
    c = comparison
    out = [f"- {line}" for line in header_lines(c)] + [""]
    for m in c.measures:
        rows = [cells for cells, _ in _cells(c, m)]
        out += [f"**{m.measure}**", "", *_md_table(_columns(c), rows), ""]
        if len(c.systems) > 2:
            out += [_anova_line(m) + ".", ""]
        pair_rows = _pair_rows(c, m)
        if pair_rows and len(c.systems) > 2:
            out += [f"{m.measure}, all pairs:", "", *_md_table(_pair_columns(c), pair_rows), ""]
        if plan:
            header = _plan_columns(c, _plan_delta_label(c, delta))
            out += [f"{m.measure}, planning (paired t):", "", *_md_table(header, _plan_rows(m))]
            out.append("")
    for w in c.warnings:
        out.append(f"> Warning: {w}")
    return "\n".join(out).rstrip() + "\n"


# ----------------------------------------------------------------------------- latex
_LATEX_ESCAPES = {
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


def latex_escape(text: str) -> str:
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in text)


def _latex_cell(text: str) -> str:
    text = latex_escape(text)
    text = text.replace(BETTER, r"$^{\blacktriangle}$").replace(WORSE, r"$^{\blacktriangledown}$")
    text = text.replace("Δ", r"$\Delta$").replace("<", r"$<$")
    return text


def to_latex(comparison: Comparison) -> str:
    """One booktabs table per measure (needs ``booktabs`` and ``amssymb``)."""
    c = comparison
    out = [f"% {line}" for line in header_lines(c)]
    for m in c.measures:
        header = _columns(c)
        out += [
            r"\begin{table}[t]",
            r"\centering",
            r"\caption{" + latex_escape(m.measure) + f", {c.queries} queries" + "}",
            r"\begin{tabular}{l" + "r" * (len(header) - 1) + "}",
            r"\toprule",
            " & ".join(_latex_cell(h) for h in header) + r" \\",
            r"\midrule",
        ]
        for cells, _ in _cells(c, m):
            out.append(" & ".join(_latex_cell(cell) for cell in cells) + r" \\")
        out += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(out)


# ----------------------------------------------------------------------------- csv, json
CSV_COLUMNS = [
    "measure",
    "system",
    "baseline",
    "is_baseline",
    "queries",
    "mean",
    "mean_low",
    "mean_high",
    "delta",
    "delta_low",
    "delta_high",
    "effect_size",
    "statistic",
    "p_value",
    "p_adjusted",
    "correction",
    "significant",
    "direction",
    "wins",
    "ties",
    "losses",
    "filled",
    "dropped",
    "sd_difference",
    "queries_needed",
    "min_detectable_delta",
]


def _csv_number(value: float | int | None) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)


def to_csv(comparison: Comparison) -> str:
    """One row per measure and system, full precision; empty cells where nothing applies."""
    c = comparison
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    filled = dict(zip(c.systems, c.filled, strict=True))
    dropped = dict(zip(c.systems, c.dropped, strict=True))
    for m in c.measures:
        for r in m.rows:
            writer.writerow(
                [
                    m.measure,
                    r.system,
                    c.baseline,
                    str(r.is_baseline).lower(),
                    c.queries,
                    _csv_number(r.mean),
                    _csv_number(r.mean_interval.low),
                    _csv_number(r.mean_interval.high),
                    _csv_number(r.delta),
                    _csv_number(r.delta_interval.low if r.delta_interval else None),
                    _csv_number(r.delta_interval.high if r.delta_interval else None),
                    _csv_number(r.effect_size),
                    _csv_number(r.statistic),
                    _csv_number(r.p_value),
                    _csv_number(r.p_adjusted),
                    "" if r.is_baseline else c.correction,
                    "" if r.is_baseline else str(r.significant).lower(),
                    r.direction or "",
                    _csv_number(r.wins),
                    _csv_number(r.ties),
                    _csv_number(r.losses),
                    filled[r.system],
                    dropped[r.system],
                    _csv_number(r.plan.sd_difference if r.plan else None),
                    _csv_number(r.plan.queries_needed if r.plan else None),
                    _csv_number(r.plan.min_detectable_delta if r.plan else None),
                ]
            )
    return out.getvalue()


def to_json(comparison: Comparison, indent: int | None = 2) -> str:
    """:meth:`Comparison.to_dict` as strict JSON."""
    return json.dumps(comparison.to_dict(), indent=indent, allow_nan=False, ensure_ascii=False)


__all__ = [
    "BETTER",
    "CSV_COLUMNS",
    "WORSE",
    "fmt_p",
    "fmt_value",
    "header_lines",
    "latex_escape",
    "print_table",
    "render_table",
    "table_width",
    "to_csv",
    "to_json",
    "to_latex",
    "to_markdown",
    "to_text",
]
