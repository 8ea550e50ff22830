"""JSON: a :class:`~rankscope.stats.Comparison` as strict JSON (:meth:`Comparison.to_dict`), or a
benchmark's :class:`~rankscope.bench.BenchmarkResult` as results.json holds it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from rankscope.bench.results import BenchmarkResult

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.stats import Comparison


def to_json(value: Comparison | BenchmarkResult, indent: int | None = 2) -> str:
    """``value`` as JSON: a comparison's :meth:`~rankscope.stats.Comparison.to_dict`, strict
    (no NaN, no Infinity), indented by ``indent``; a benchmark's results.json (indented by 2)."""
    if isinstance(value, BenchmarkResult):
        return value.to_json()
    return json.dumps(value.to_dict(), indent=indent, allow_nan=False, ensure_ascii=False)


__all__ = ["to_json"]
