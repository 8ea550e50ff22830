"""The report's figures, drawn with matplotlib as SVG text (offline, no pyplot state):

- :func:`forest_svg`: each configuration's difference from the best on the headline, with its
  simultaneous 95% interval (randomised Tukey HSD), significant ones in red;
- :func:`differences_svg`: per configuration, the per-query differences from the best, sorted
  (one bar per query);
- :func:`scatter_svg`: quality (headline mean with its 95% interval) against p50 latency (with
  the range of the per-pass p50s), the Pareto front drawn through the configurations no other
  beats on both.

Every SVG carries ``data-figure="<name>"`` on its root, and its data marks have ids
(``forest-point-<i>``, ``forest-interval-<i>``, ``differences-bar-<panel>-<i>``,
``scatter-point-<i>``, ``pareto-front``), so a test (or a reader) can find what was drawn.
matplotlib is the ``report`` extra.
"""

from __future__ import annotations

import io
import math
import re
from typing import TYPE_CHECKING

from rankscope.errors import RankscopeError
from rankscope.report.content import ReportContent
from rankscope.util.extras import needs_extra

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

#: at most this many per-query panels (the configurations closest to the best first)
MAX_DIFFERENCE_PANELS = 12

BEST = "#1b6ac9"
WORSE = "#c62828"
NEUTRAL = "#5f6b7a"
BETTER_BAR = "#2e7d32"
FRONT = "#e07b00"


def _matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise RankscopeError(
            needs_extra("drawing the report's figures", "matplotlib", "report")
        ) from None


def _figure(width: float, height: float) -> Figure:
    _matplotlib()
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    return fig


def _svg(fig: Figure, name: str) -> str:
    """The figure as an ``<svg>`` element to inline in HTML (no XML prolog, text kept as text,
    ids unique to this figure, no timestamp)."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": f"rankscope-{name}"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    text = text[text.index("<svg") :]
    return re.sub(r"^<svg ", f'<svg data-figure="{name}" role="img" ', text, count=1)


def forest_svg(content: ReportContent) -> str | None:
    """Differences from the best with simultaneous intervals; None when nothing was compared."""
    quality = content.quality
    if quality is None or not quality.compared:
        return None
    rows = [r for r in quality.rows if r.system != quality.baseline]
    rows.sort(key=lambda r: -(r.delta or 0.0))
    fig = _figure(10.0, 1.1 + 0.42 * len(rows))
    ax = fig.add_subplot()
    for y, r in enumerate(reversed(rows)):
        colour = WORSE if r.significant and r.direction == "worse" else NEUTRAL
        interval, delta = r.delta_interval, r.delta or 0.0
        if interval is not None and math.isfinite(interval.low) and math.isfinite(interval.high):
            low, high = interval.low, interval.high
            (line,) = ax.plot([low, high], [y, y], color=colour, linewidth=2.2)
            line.set_gid(f"forest-interval-{y}")
        (point,) = ax.plot([delta], [y], marker="o", markersize=7, color=colour)
        point.set_gid(f"forest-point-{y}")
    ax.axvline(0.0, color=BEST, linewidth=1.2, linestyle="--")
    ax.set_yticks(range(len(rows)), [r.system for r in reversed(rows)])
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlabel(f"Δ {content.label} vs {quality.baseline} (the best)")
    level = f"{content.statistics.level * 100:g}%"
    ax.set_title(
        f"Difference from the best, {level} simultaneous intervals "
        f"({quality.test_name}, n = {quality.num_queries}); red: significantly worse",
        fontsize=9,
        loc="left",
    )
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    return _svg(fig, "forest")


def differences_svg(content: ReportContent) -> str | None:
    """Sorted per-query differences from the best, one panel per configuration."""
    quality = content.quality
    if quality is None or not content.differences:
        return None
    order = {r.system: -(r.delta or 0.0) for r in quality.rows}
    shown = sorted(content.differences, key=lambda d: order.get(d.name, 0.0))
    shown = shown[:MAX_DIFFERENCE_PANELS]
    columns = 1 if len(shown) == 1 else 2
    lines = math.ceil(len(shown) / columns)
    fig = _figure(10.0 if columns == 2 else 7.0, 0.8 + 2.1 * lines)
    axes = fig.subplots(lines, columns, sharey=True, squeeze=False)
    top = max((float(abs(d.values).max()) for d in shown if d.values.size), default=1.0) or 1.0
    for k, (ax, diff) in enumerate(zip(axes.flat, shown, strict=False)):
        values = sorted(diff.values.tolist(), reverse=True)
        sense = 1.0 if diff.higher_is_better else -1.0
        colours = [
            BETTER_BAR if v * sense > 0 else WORSE if v * sense < 0 else NEUTRAL for v in values
        ]
        bars = ax.bar(range(len(values)), values, width=1.0, color=colours, linewidth=0)
        for j, bar in enumerate(bars):
            bar.set_gid(f"differences-bar-{k}-{j}")
        ax.axhline(0.0, color="#333333", linewidth=0.6)
        wins, ties, losses = diff.wins_ties_losses
        ax.set_title(
            f"{diff.name} − {quality.baseline}: W/T/L {wins}/{ties}/{losses}, "
            f"mean {float(diff.values.mean()):+.4f}",
            fontsize=8.5,
            loc="left",
        )
        ax.set_xlim(-0.5, len(values) - 0.5)
        ax.set_ylim(-top * 1.05, top * 1.05)
        ax.set_xticks([])
        ax.tick_params(labelsize=8)
    for ax in list(axes.flat)[len(shown) :]:
        ax.set_visible(False)
    fig.supylabel(f"Δ {content.label} per query", fontsize=9)
    fig.supxlabel(f"the {quality.num_queries} queries, sorted by difference", fontsize=9)
    return _svg(fig, "differences")


def scatter_svg(content: ReportContent) -> str | None:
    """Quality against p50 latency with the Pareto front; None without two points."""
    points = [
        r for r in content.rows if r.quality is not None and r.p50_ms is not None and r.p50_ms > 0
    ]
    if not points:
        return None
    fig = _figure(10.0, 5.4)
    ax = fig.add_subplot()
    for i, r in enumerate(points):
        assert r.quality is not None and r.p50_ms is not None
        low, high = r.quality.mean_interval.low, r.quality.mean_interval.high
        yerr = None
        if math.isfinite(low) and math.isfinite(high):
            yerr = [[r.quality.mean - low], [high - r.quality.mean]]
        xerr = None
        if r.p50_by_pass_ms:
            xerr = [[r.p50_ms - min(r.p50_by_pass_ms)], [max(r.p50_by_pass_ms) - r.p50_ms]]
            xerr = [[max(xerr[0][0], 0.0)], [max(xerr[1][0], 0.0)]]
        colour = FRONT if r.on_front else NEUTRAL
        drawn = ax.errorbar(
            [r.p50_ms],
            [r.quality.mean],
            xerr=xerr,
            yerr=yerr,
            fmt="o",
            color=colour,
            ecolor=colour,
            elinewidth=1.0,
            capsize=3,
            markersize=7,
        )
        drawn.lines[0].set_gid(f"scatter-point-{i}")
        ax.annotate(
            r.name,
            (r.p50_ms, r.quality.mean),
            xytext=(6, 5),
            textcoords="offset points",
            fontsize=8.5,
        )
    front = sorted(
        (r for r in points if r.on_front),
        key=lambda r: r.p50_ms or 0.0,
    )
    if len(front) > 1:
        xs = [r.p50_ms or 0.0 for r in front]
        ys = [r.quality.mean if r.quality else 0.0 for r in front]
        (step,) = ax.step(xs, ys, where="post", color=FRONT, linewidth=1.4, label="Pareto front")
        step.set_gid("pareto-front")
        ax.legend(loc="lower right", fontsize=8, frameon=False)
    latencies = [r.p50_ms or 0.0 for r in points]
    if max(latencies) / min(latencies) > 20:
        ax.set_xscale("log")
    ax.set_xlabel("p50 latency, ms (bars: range of the per-pass p50s)")
    ax.set_ylabel(f"{content.label} (bars: 95% CI)")
    ax.set_title(
        f"Quality against latency over {content.num_queries} queries; orange: the Pareto "
        "front (no configuration is at least as good on both and better on one, beyond noise)",
        fontsize=9,
        loc="left",
    )
    ax.grid(color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    return _svg(fig, "scatter")


__all__ = ["MAX_DIFFERENCE_PANELS", "differences_svg", "forest_svg", "scatter_svg"]
