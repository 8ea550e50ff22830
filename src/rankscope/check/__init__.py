"""A regression gate for CI (``rankscope check``): is a candidate non-inferior to the
baseline, measure by measure, on one query set? Exit 0 pass, 1 regression (docs/ci.md).

The names load on first use (:mod:`rankscope.lazy`).
"""

from typing import TYPE_CHECKING

from rankscope.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.check.core import (
        ALPHA,
        MARGIN,
        WORST,
        CheckResult,
        MeasureCheck,
        MovedQuery,
        check,
        check_benchmark,
        check_runs,
        check_suite,
        parse_floors,
    )
    from rankscope.check.render import render_markdown, render_text

__all__ = [
    "ALPHA",
    "MARGIN",
    "WORST",
    "CheckResult",
    "MeasureCheck",
    "MovedQuery",
    "check",
    "check_benchmark",
    "check_runs",
    "check_suite",
    "parse_floors",
    "render_markdown",
    "render_text",
]

__getattr__, __dir__ = lazy_exports(globals())
