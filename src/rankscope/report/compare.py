"""What a :class:`~rankscope.stats.Comparison` shows, whatever the format.

Per measure and system: the mean with its interval, the difference from the baseline with its
interval, the effect size, the (corrected) p-value, wins/ties/losses and a mark for a
significant difference (▲ better, ▼ worse, in the quantity's own sense); and above the tables
the test, the correction and its family, the number of queries and the filled/dropped counts.
The formats render these cells: :mod:`.terminal`, :mod:`.markdown`, :mod:`.latex`; :mod:`.csv`
and :mod:`.json` carry every number at full precision.
"""

from __future__ import annotations

from collections.abc import Iterator

from rankscope.report.numbers import BETTER, WORSE, fmt_interval, fmt_p, fmt_value
from rankscope.stats.comparison import (
    CORRECTION_NAMES,
    TEST_NAMES,
    Comparison,
    MeasureComparison,
)


def mark(direction: str | None) -> str:
    """The mark of a significant difference: ▲ better, ▼ worse, nothing otherwise."""
    return BETTER if direction == "better" else WORSE if direction == "worse" else ""


def level_text(comparison: Comparison) -> str:
    """The intervals' level as a percentage (``95%``)."""
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
        f"{c.queries} queries: {query_set_text(c)}",
        f"{test}; {control}; alpha {c.alpha:g}",
        f"{BETTER}/{WORSE} significantly better/worse than {c.baseline} ({significant}); "
        f"ES = {c.effect_size}; {level_text(c)} intervals (Δ: {c.delta_interval})",
    ]
    # where a lower value is better (a benchmark's per-query latency), ▲ marks a lower one
    lower = [m.measure for m in c.measures if not m.quantity.higher_is_better]
    if lower:
        lines.append(
            f"{', '.join(lower)}: lower is better ({BETTER} marks a lower value; W/T/L: queries "
            "where it is lower/equal/higher)"
        )
    return lines


def query_set_text(c: Comparison) -> str:
    """The query set, and the systems' filled and dropped queries."""
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


def columns(c: Comparison) -> list[str]:
    """The header of each measure's table."""
    p_name = "p" if c.correction in ("none", "tukey") else f"p ({CORRECTION_NAMES[c.correction]})"
    return [
        "system",
        "mean",
        f"{level_text(c)} CI",
        f"Δ vs {c.baseline}",
        f"{level_text(c)} CI of Δ",
        "ES",
        p_name,
        "W/T/L",
    ]


def cells(c: Comparison, m: MeasureComparison) -> Iterator[tuple[list[str], str | None]]:
    """Each system's row of measure ``m``, and its direction (for a colour)."""
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
                f"{fmt_value(r.delta, signed=True)} {mark(r.direction)}".rstrip(),
                fmt_interval(r.delta_interval, signed=True),
                fmt_value(r.effect_size, 2, signed=True),
                fmt_p(r.p_adjusted),
                f"{r.wins}/{r.ties}/{r.losses}",
            ],
            r.direction,
        )


def anova_line(m: MeasureComparison) -> str:
    """The two-way ANOVA of a measure, in one line."""
    a = m.anova
    return (
        f"Two-way ANOVA (systems × queries): F({a.df_systems}, {a.df_residual}) = "
        f"{fmt_value(a.f, 3)}, p = {fmt_p(a.p_value)}"
    )


def pair_rows(c: Comparison, m: MeasureComparison) -> list[list[str]]:
    """Every pair of systems (when tested), marked in the quantity's own sense."""
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


def pair_columns(c: Comparison) -> list[str]:
    """The header of the pairs' table."""
    simultaneous = c.test in ("tukey", "rtukey")
    return [
        "pair",
        "Δ",
        f"{level_text(c)} {'simultaneous ' if simultaneous else ''}CI",
        "ES",
        "p" if c.correction in ("none", "tukey") else f"p ({CORRECTION_NAMES[c.correction]})",
    ]


def plan_columns(c: Comparison, plan_delta: str) -> list[str]:
    """The header of the planning table."""
    power = next((r.plan.power for m in c.measures for r in m.rows if r.plan), 0.8)
    return [
        "system",
        "sd(d)",
        plan_delta,
        f"queries needed (power {power:g})",
        f"detectable Δ with {c.queries} queries",
    ]


def plan_rows(m: MeasureComparison) -> list[list[str]]:
    """Each compared system's planning figures."""
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


def plan_delta_label(c: Comparison, delta: float | None) -> str:
    """What the planned difference is: the observed one, or the one asked for."""
    return "Δ (observed)" if delta is None else "Δ"


__all__ = [
    "anova_line",
    "cells",
    "columns",
    "header_lines",
    "level_text",
    "mark",
    "pair_columns",
    "pair_rows",
    "plan_columns",
    "plan_delta_label",
    "plan_rows",
    "query_set_text",
]
