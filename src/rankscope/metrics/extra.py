"""Measures trec_eval lacks, computed for every query at once from :func:`align` (the kernels
behind the ``judged``, ``f1``, ``mrr@k`` and ``ndcg_exp`` entries of
:mod:`rankscope.metrics.kernels`; ``hit@k`` is trec_eval's ``success``).

All are segment operations over the aligned rows (cumulative sums indexed by ``offsets``); no
Python loop runs per query.  A document is relevant when its grade is ``>= rel_level`` and
``>= 0`` (trec_eval never counts a negative grade as relevant); ``k`` is the rank cutoff, and no
cutoff means the whole ranking.

- ``judged@k``: judged documents (present in the qrels, any grade) among the top ``k`` divided by
  the number of documents in the top ``k``, that is ``min(k, retrieved)``, as ir_measures'
  ``Judged@k`` does; 0 when nothing was retrieved.
- ``f1@k``: ``2·P·R / (P + R)`` with ``P = P@k`` (denominator ``k``, as trec_eval's ``P``) and
  ``R = recall@k`` (denominator: relevant documents in the qrels); 0 when both are 0.  Without a
  cutoff, ``P`` is over the retrieved documents.
- ``mrr@k``: ``1 / rank`` of the first relevant document when it is within the top ``k``, else 0.
- ``ndcg_exp@k``: DCG with gain ``2^grade - 1`` (relevant documents only) and discount
  ``1 / log2(rank + 1)`` over the top ``k``, divided by the same sum over the ideal ranking of
  the query's qrels (grades sorted descending); 0 when the ideal DCG is 0.  Ties keep the run's
  trec_eval order (score descending, then doc id descending).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rankscope.metrics.align import Aligned
from rankscope.metrics.segments import positions, segment_count, segment_sum, top_rows

Floats = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class _View:
    """The top-``k`` rows of every query (all rows when ``k`` is None), compacted.

    ``rows``: indices into the aligned rows (``None``: all of them); ``offsets``: per-query
    segments of the compacted rows; ``positions``: 0-based rank of each compacted row.
    """

    rows: NDArray[np.int64] | None
    offsets: NDArray[np.int64]
    positions: NDArray[np.int64]

    def take(self, values: NDArray[Any]) -> NDArray[Any]:
        return values if self.rows is None else values[self.rows]


def _view(offsets: NDArray[np.int64], k: int | None) -> _View:
    counts = np.diff(offsets)
    if k is None or (counts.shape[0] and int(counts.max()) <= k):
        return _View(None, offsets, positions(offsets))
    rows, new_offsets = top_rows(offsets, k)
    return _View(rows, new_offsets, positions(new_offsets))


class ExtraKernel:
    """Computes the extra measures of one :class:`Aligned`; views are shared between measures.

    Cutoff measures touch only the top ``k`` rows of each query (``nq * k`` values), not the
    whole ranking.
    """

    def __init__(self, aligned: Aligned) -> None:
        self.aligned = aligned
        self._views: dict[int | None, _View] = {}
        self._ideal_views: dict[int | None, _View] = {}

    def view(self, k: int | None) -> _View:
        if k not in self._views:
            self._views[k] = _view(self.aligned.offsets, k)
        return self._views[k]

    def ideal_view(self, k: int | None) -> _View:
        if k not in self._ideal_views:
            self._ideal_views[k] = _view(self.aligned.qrels_offsets, k)
        return self._ideal_views[k]

    def relevant(self, view: _View, rel_level: int) -> NDArray[np.bool_]:
        grades = view.take(self.aligned.grades)
        judged = view.take(self.aligned.judged)
        result: NDArray[np.bool_] = (grades >= max(rel_level, 0)) & judged
        return result

    def num_rel(self, rel_level: int) -> NDArray[np.int64]:
        q = self.aligned.qrels_grades
        return segment_count(q >= max(rel_level, 0), self.aligned.qrels_offsets)

    def judged(self, k: int | None) -> Floats:
        view = self.view(k)
        judged = segment_count(view.take(self.aligned.judged), view.offsets)
        return _ratio(judged, np.diff(view.offsets))  # min(k, retrieved), as ir_measures

    def f1(self, k: int | None, rel_level: int) -> Floats:
        view = self.view(k)
        rel_ret = segment_count(self.relevant(view, rel_level), view.offsets)
        n = rel_ret.shape[0]
        denominator = np.diff(view.offsets) if k is None else np.full(n, k, dtype=np.int64)
        precision = _ratio(rel_ret, denominator)
        recall = _ratio(rel_ret, self.num_rel(rel_level))
        return _ratio(2.0 * precision * recall, precision + recall)

    def mrr(self, k: int | None, rel_level: int) -> Floats:
        view = self.view(k)
        rows = np.flatnonzero(self.relevant(view, rel_level))
        out = np.zeros(self.aligned.num_queries, dtype=np.float64)
        if rows.shape[0]:
            # Rows are ranked within each query, so the first hit of a query is its best rank.
            query = np.searchsorted(view.offsets, rows, side="right") - 1
            first = np.ones(rows.shape[0], dtype=np.bool_)
            first[1:] = query[1:] != query[:-1]
            out[query[first]] = 1.0 / (view.positions[rows[first]] + 1.0)
        return out

    def ndcg_exp(self, k: int | None, rel_level: int) -> Floats:
        view = self.view(k)
        gains = _exp_gain(view.take(self.aligned.grades), self.relevant(view, rel_level))
        dcg = segment_sum(gains * _discount(view.positions), view.offsets)
        ideal_view = self.ideal_view(k)
        q = ideal_view.take(self.aligned.qrels_grades)
        ideal_gains = _exp_gain(q, q >= max(rel_level, 0))
        ideal = segment_sum(ideal_gains * _discount(ideal_view.positions), ideal_view.offsets)
        return _ratio(dcg, ideal)


def _exp_gain(grades: NDArray[np.int64], relevant: NDArray[np.bool_]) -> Floats:
    out = np.zeros(grades.shape[0], dtype=np.float64)
    out[relevant] = np.exp2(grades[relevant].astype(np.float64)) - 1.0
    return out


def _discount(positions: NDArray[np.int64]) -> Floats:
    """``1 / log2(rank + 1)`` for 1-based ranks, from a table (cheaper than a log per row)."""
    if positions.shape[0] == 0:
        return np.zeros(0, dtype=np.float64)
    table = 1.0 / np.log2(np.arange(int(positions.max()) + 1, dtype=np.float64) + 2.0)
    result: Floats = table[positions]
    return result


def _ratio(
    numerator: NDArray[np.float64] | NDArray[np.int64],
    denominator: NDArray[np.float64] | NDArray[np.int64],
) -> Floats:
    num = np.asarray(numerator, dtype=np.float64)
    den = np.asarray(denominator, dtype=np.float64)
    out = np.zeros(num.shape[0], dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


__all__ = ["ExtraKernel"]
