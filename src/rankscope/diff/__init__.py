"""Per-query differences between two runs or two benchmark configurations: the queries that
moved, sorted by the change of a measure, with both ranked lists side by side
(``rankscope diff``; the report's "Queries that moved").

The names load on first use (:mod:`rankscope.lazy`).
"""

from typing import TYPE_CHECKING

from rankscope.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.diff.bench import diff_benchmark, diff_configurations
    from rankscope.diff.core import (
        Counts,
        DiffRow,
        MissedDoc,
        QueryDiff,
        RunDiff,
        RunSummary,
        Side,
        attach_texts,
        diff_runs,
    )
    from rankscope.diff.pool import unjudged_pool

__all__ = [
    "Counts",
    "DiffRow",
    "MissedDoc",
    "QueryDiff",
    "RunDiff",
    "RunSummary",
    "Side",
    "attach_texts",
    "diff_benchmark",
    "diff_configurations",
    "diff_runs",
    "unjudged_pool",
]

__getattr__, __dir__ = lazy_exports(globals())
