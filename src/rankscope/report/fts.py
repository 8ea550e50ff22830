"""The full-text benchmark's table layout (``rankscope bench --format fts``): a
``=== FTS Quality Benchmark ===`` header, then one row per measure and one column per
configuration (its engines side by side), from the same columns as every other benchmark table.
"""

from __future__ import annotations

from rankscope.bench.results import BenchmarkResult, ViewName
from rankscope.report import bench

HEADER = "=== FTS Quality Benchmark ==="


def to_fts_table(result: BenchmarkResult, *, view: ViewName | None = None) -> str:
    """The benchmark as text: measures down, configurations across (``-`` where a value is
    missing), each number with the digits the terminal table gives it."""
    chosen = view or result.default_view
    configs = result.successful
    rows: list[list[str]] = [["measure", *(c.name for c in configs)]]
    for col in bench.columns(result, chosen):
        if col.cell is not None or col.parts:
            continue  # intervals and marked differences are not one number per engine
        cells = []
        for config in configs:
            value = col.value(config)
            if value is None:
                cells.append("-")
            else:
                cells.append(col.show(value) if col.show else f"{value:.{col.digits}f}")
        rows.append([col.header, *cells])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    info = result.suite
    lines = [HEADER, f"suite: {info.name} ({info.num_judged_queries} judged queries, "
             f"{info.num_documents} documents)"]  # fmt: skip
    for n, row in enumerate(rows):
        lines.append(
            "  ".join(
                cell.ljust(w) if i == 0 else cell.rjust(w)
                for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            ).rstrip()
        )
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


__all__ = ["HEADER", "to_fts_table"]
