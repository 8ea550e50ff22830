"""The terminal: rich tables, coloured, fitted to the console's width.

:func:`render_table` prints a :class:`~rankscope.stats.Comparison` (the header, one table per
measure, its pairs and planning figures; the console is widened so that no cell wraps) or a
benchmark's :class:`~rankscope.bench.BenchmarkResult` (one row per configuration; secondary
columns are left out, and said so, when the console is narrower than the table). :func:`to_text`
is the comparison as plain text.
"""

from __future__ import annotations

import io
import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING, overload

from rich import box
from rich.console import Console, Group, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from rankscope.bench.evaluation import measure_label
from rankscope.bench.results import BenchmarkResult, ConfigResult, ViewName
from rankscope.report import bench, compare
from rankscope.report.numbers import WORSE

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.stats import Comparison


@overload
def render_table(
    value: Comparison,
    console: Console | None = None,
    *,
    plan: bool = False,
    delta: float | None = None,
    fit: bool = False,
) -> None: ...
@overload
def render_table(
    value: BenchmarkResult,
    console: Console | None = None,
    *,
    by_category: bool = False,
    view: ViewName | None = None,
    folder: str | None = None,
) -> None: ...
def render_table(
    value: Comparison | BenchmarkResult,
    console: Console | None = None,
    *,
    plan: bool = False,
    delta: float | None = None,
    by_category: bool = False,
    view: ViewName | None = None,
    folder: str | None = None,
    fit: bool = False,
) -> None:
    """Print ``value`` to ``console`` (default: standard output): a comparison with its
    planning figures (``plan``, for ``delta``; ``fit``: within the console's width), or a
    benchmark's table over a ``view`` (with a table per category, ``by_category``;
    ``folder``: where its results are, for the commands the notes give)."""
    if isinstance(value, BenchmarkResult):
        target = console or Console()
        _print_benchmark(value, target, by_category=by_category, view=view, folder=folder)
    else:
        _print_comparison(value, console, plan=plan, delta=delta, fit=fit)


# ----------------------------------------------------------------------------- a comparison
#: the columns of a measure's table left out, in this order, when it is wider than the
#: terminal (by index in compare.columns): ES, the mean's interval, W/T/L, the Δ's interval
COMPARISON_DROP_ORDER = (5, 2, 7, 4)


def _comparison(
    comparison: Comparison,
    *,
    plan: bool = False,
    delta: float | None = None,
    hidden: Sequence[int] = (),
    compact: bool = False,
    header: bool = True,
) -> RenderableType:
    """A rich renderable: the header, then one table per measure (and its pairs and plan);
    ``hidden``: columns of the measures' tables left out; ``compact``: one space between
    columns."""
    c = comparison
    lines = compare.header_lines(c) if header else []
    parts: list[RenderableType] = [Text(line, style="dim") for line in lines]
    shown = [i for i in range(len(compare.columns(c))) if i not in hidden]
    for m in c.measures:
        table = Table(
            title=m.measure,
            title_justify="left",
            show_edge=False,
            box=box.SIMPLE_HEAD if compact else box.HEAVY_HEAD,
            pad_edge=not compact,
            padding=(0, 1, 0, 0) if compact else (0, 1),
        )
        names = compare.columns(c)
        if compact:  # the header lines name the baseline; its row says it is
            names[3] = "Δ"
        for i in shown:
            table.add_column(names[i], justify="left" if i == 0 else "right", no_wrap=i == 0)
        for texts, direction in compare.cells(c, m):
            style = "green" if direction == "better" else "red" if direction == "worse" else None
            if compact and texts[0].endswith(" (baseline)"):
                texts = [texts[0].removesuffix(" (baseline)"), *texts[1:3], "baseline", *texts[4:]]
            table.add_row(*(texts[i] for i in shown), style=style)
        parts.extend([Text(""), table])
        if len(c.systems) > 2:
            parts.append(Text(compare.anova_line(m), style="dim"))
        found = compare.pair_rows(c, m)
        if found and len(c.systems) > 2:
            pairs = Table(title=f"{m.measure}: all pairs", title_justify="left", show_edge=False)
            for i, name in enumerate(compare.pair_columns(c)):
                pairs.add_column(name, justify="left" if i == 0 else "right")
            for row in found:
                pairs.add_row(*row)
            parts.extend([Text(""), pairs])
        if plan:
            planning = Table(
                title=f"{m.measure}: planning (paired t)", title_justify="left", show_edge=False
            )
            for i, name in enumerate(compare.plan_columns(c, compare.plan_delta_label(c, delta))):
                planning.add_column(name, justify="left" if i == 0 else "right")
            for row in compare.plan_rows(m):
                planning.add_row(*row)
            parts.extend([Text(""), planning])
    return Group(*parts)


def _width(renderable: RenderableType) -> int:
    """The width a renderable needs to print without wrapping any cell."""
    return Console(width=10_000).measure(renderable).maximum


def _print_comparison(
    comparison: Comparison,
    console: Console | None,
    *,
    plan: bool,
    delta: float | None,
    fit: bool = False,
) -> None:
    """Print the comparison. ``fit``: within the console's width, compact and leaving out
    secondary columns (and saying which) when needed; otherwise widening the console so that
    no cell wraps."""
    renderable = _comparison(comparison, plan=plan, delta=delta)
    console = console or Console(highlight=False, soft_wrap=False)
    needed = _width(renderable)
    if needed <= console.width:
        console.print(renderable)
        return
    if fit:
        names = compare.columns(comparison)
        hidden: list[int] = []

        def tables_width() -> int:  # the header's lines wrap on their own
            return _width(
                _comparison(
                    comparison, plan=plan, delta=delta, hidden=hidden, compact=True, header=False
                )
            )

        for column in COMPARISON_DROP_ORDER:
            if tables_width() <= console.width:
                break
            hidden.append(column)
        console.print(_comparison(comparison, plan=plan, delta=delta, hidden=hidden, compact=True))
        if hidden:
            console.print(
                Text(
                    f"left out at {console.width} columns: "
                    f"{', '.join(names[i] for i in hidden)} (--wide, a wider terminal or "
                    "--format markdown shows every column)",
                    style="dim",
                )
            )
        return
    console.width = needed
    console.print(renderable)


def to_text(comparison: Comparison, *, plan: bool = False, delta: float | None = None) -> str:
    """The terminal table as plain text (no colour, no wrapping)."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=80, color_system=None, highlight=False, soft_wrap=False)
    _print_comparison(comparison, console, plan=plan, delta=delta)
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()) + "\n"


# ----------------------------------------------------------------------------- a benchmark
def _print_benchmark(
    result: BenchmarkResult,
    console: Console,
    *,
    by_category: bool = False,
    view: ViewName | None = None,
    folder: str | None = None,
) -> None:
    """Print the comparison table, notes and recommendations to ``console``."""
    chosen = view or result.default_view
    ok = result.successful
    shown: list[bench.Column] = []
    left_out: list[bench.Column] = []
    if ok:
        heading = bench.title(result, chosen)

        def measure(cols: Sequence[bench.Column], compact: bool = False) -> int:
            # the width the table takes unsqueezed (the title wraps on its own)
            wide = console.options.update_width(100_000)
            table = _rich_table("", ok, cols, compact=compact)
            return Measurement.get(console, wide, table).maximum

        every = bench.columns(result, chosen)
        # boxed when every column fits; else compact (no edges, one space between columns),
        # which keeps more of them
        compact = measure(every) > console.width
        shown, left_out = bench.fit_columns(
            every, console.width, lambda cols: measure(cols, compact)
        )
        console.print(_rich_table(heading, ok, shown, compact=compact))
        if left_out:
            console.print(
                Text(
                    f"left out at {console.width} columns: "
                    f"{', '.join(c.header for c in left_out)} (--wide, a wider terminal or "
                    "--format markdown shows every column)",
                    style="dim",
                )
            )
    if by_category and ok and not result.suite.categories:
        console.print(Text(bench.NO_CATEGORIES, style="yellow"))
    if by_category and ok:
        for category in result.suite.categories:
            scores = ok[0].view(chosen).per_category.get(category)
            n = 0 if scores is None else scores.num_queries
            cols = bench.category_columns(result, category, chosen)
            console.print(_rich_table(f"category {category} ({n} {bench.query_word(n)})", ok, cols))
    headers = None if not left_out else {c.header for c in shown}
    for note in bench.notes(result, chosen, folder, shown=headers):
        console.print(Text(note.text, style=note.style))
    label = measure_label(result.headline)
    for key, rec in result.recommended(chosen).items():
        console.print(
            Text.assemble(
                (f"{bench.RECOMMENDATION_TITLES.get(key, key)}: ", "bold"),
                (rec.config, "bold cyan"),
                f" ({bench.recommendation_line(key, rec, label)})",
            )
        )
    if result.recommended(chosen).items():
        where = shlex.quote(folder) if folder else "<output folder>"
        console.print(
            Text(f"why, and which are within noise: rankscope report {where}", style="dim")
        )


def _rich_table(
    title: str, rows: Sequence[ConfigResult], cols: Sequence[bench.Column], *, compact: bool = False
) -> Table:
    # compact: what must stay does not fit; no outer edge and one space between columns
    table = (
        Table(
            title=Text(title),
            title_justify="left",
            box=box.SIMPLE_HEAD,
            pad_edge=False,
            show_edge=False,
            padding=(0, 1, 0, 0),
        )
        if compact
        else Table(title=Text(title), title_justify="left")
    )
    table.add_column("configuration", no_wrap=True)
    for col in cols:  # a cell never wraps (an interval on two lines): the column goes instead
        table.add_column(col.header, justify="right", no_wrap=True)
    bests = [bench.best(col, rows) for col in cols]
    for row in rows:
        row_cells: list[Text | str] = [row.name]
        for col, top in zip(cols, bests, strict=True):
            value = col.value(row)
            text = col.render(row)
            style = "bold green" if value is not None and top is not None and value == top else ""
            if WORSE in text:
                style = "red"
            row_cells.append(Text(text, style=style))
        table.add_row(*row_cells)
    return table


__all__ = ["render_table", "to_text"]
