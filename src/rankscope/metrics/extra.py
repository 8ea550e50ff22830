"""Measures trec_eval lacks, computed for every query at once from :func:`align`.

All are segment operations over the aligned rows (cumulative sums indexed by ``offsets``); no
Python loop runs per query.  A document is relevant when its grade is ``>= rel_level`` and
``>= 0`` (trec_eval never counts a negative grade as relevant); ``k`` is the rank cutoff, and no
cutoff means the whole ranking.

- ``hit@k``: 1 when a relevant document is among the top ``k``, else 0 (trec_eval's
  ``success.k``; ir_measures' ``Success@k``).
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

import numpy as np
from numpy.typing import NDArray

from rankscope.metrics.align import Aligned
from rankscope.metrics.names import Measure

Floats = NDArray[np.float64]


class ExtraKernel:
    """Computes the extra measures of one :class:`Aligned`, sharing per-row arrays between them."""

    def __init__(self, aligned: Aligned) -> None:
        self.aligned = aligned
        self._positions: NDArray[np.int64] | None = None
        self._qrels_positions: NDArray[np.int64] | None = None

    # Shared per-row views, built on first use.
    @property
    def positions(self) -> NDArray[np.int64]:
        if self._positions is None:
            self._positions = self.aligned.positions()
        return self._positions

    @property
    def qrels_positions(self) -> NDArray[np.int64]:
        if self._qrels_positions is None:
            offsets = self.aligned.qrels_offsets
            counts = np.diff(offsets)
            n = int(offsets[-1])
            self._qrels_positions = np.arange(n, dtype=np.int64) - np.repeat(offsets[:-1], counts)
        return self._qrels_positions

    def relevant(self, rel_level: int) -> NDArray[np.bool_]:
        grades = self.aligned.grades
        return (grades >= rel_level) & (grades >= 0) & self.aligned.judged

    def num_rel(self, rel_level: int) -> NDArray[np.int64]:
        q = self.aligned.qrels_grades
        return _segment_count((q >= rel_level) & (q >= 0), self.aligned.qrels_offsets)

    def top(self, k: int | None) -> NDArray[np.bool_] | None:
        return None if k is None else self.positions < k

    def compute(self, measure: Measure, rel_level: int) -> Floats:
        """Per-query values of ``measure`` (one of the extras), in ``aligned.query_ids`` order."""
        level = rel_level if measure.rel is None else measure.rel
        k = None if measure.cutoff is None else int(measure.cutoff)
        name = measure.name
        if name == "hit":
            return self.hit(k, level)
        if name == "judged":
            return self.judged(k)
        if name == "f1":
            return self.f1(k, level)
        if name == "mrr":
            return self.mrr(k, level)
        if name == "ndcg_exp":
            return self.ndcg_exp(k, level)
        raise ValueError(f"{measure} is not an extra measure")

    def _count_top(self, mask: NDArray[np.bool_], k: int | None) -> NDArray[np.int64]:
        top = self.top(k)
        return _segment_count(mask if top is None else mask & top, self.aligned.offsets)

    def hit(self, k: int | None, rel_level: int) -> Floats:
        return (self._count_top(self.relevant(rel_level), k) > 0).astype(np.float64)

    def judged(self, k: int | None) -> Floats:
        retrieved = self.aligned.num_ret
        shown = retrieved if k is None else np.minimum(retrieved, k)
        return _ratio(self._count_top(self.aligned.judged, k), shown)

    def f1(self, k: int | None, rel_level: int) -> Floats:
        rel_ret = self._count_top(self.relevant(rel_level), k).astype(np.float64)
        denominator = self.aligned.num_ret if k is None else np.full(rel_ret.shape[0], k)
        precision = _ratio(rel_ret, denominator)
        recall = _ratio(rel_ret, self.num_rel(rel_level))
        return _ratio(2.0 * precision * recall, precision + recall)

    def mrr(self, k: int | None, rel_level: int) -> Floats:
        mask = self.relevant(rel_level)
        top = self.top(k)
        if top is not None:
            mask &= top
        rows = np.flatnonzero(mask)
        out = np.zeros(self.aligned.num_queries, dtype=np.float64)
        if rows.shape[0]:
            # Rows are ranked within each query, so the first hit of a query is its best rank.
            query = np.searchsorted(self.aligned.offsets, rows, side="right") - 1
            first = np.ones(rows.shape[0], dtype=np.bool_)
            first[1:] = query[1:] != query[:-1]
            out[query[first]] = 1.0 / (self.positions[rows[first]] + 1.0)
        return out

    def ndcg_exp(self, k: int | None, rel_level: int) -> Floats:
        a = self.aligned
        gains = _exp_gain(a.grades, self.relevant(rel_level))
        dcg = _segment_sum(gains * _discount(self.positions, k), a.offsets)
        q = a.qrels_grades
        ideal_gains = _exp_gain(q, (q >= rel_level) & (q >= 0))
        ideal = _segment_sum(ideal_gains * _discount(self.qrels_positions, k), a.qrels_offsets)
        return _ratio(dcg, ideal)


def _exp_gain(grades: NDArray[np.int64], relevant: NDArray[np.bool_]) -> Floats:
    out = np.zeros(grades.shape[0], dtype=np.float64)
    out[relevant] = np.exp2(grades[relevant].astype(np.float64)) - 1.0
    return out


def _discount(positions: NDArray[np.int64], k: int | None) -> Floats:
    discount = 1.0 / np.log2(positions.astype(np.float64) + 2.0)
    if k is not None:
        discount[positions >= k] = 0.0
    return discount


def _segment_count(mask: NDArray[np.bool_], offsets: NDArray[np.int64]) -> NDArray[np.int64]:
    sums = np.zeros(mask.shape[0] + 1, dtype=np.int64)
    np.cumsum(mask, out=sums[1:])
    result: NDArray[np.int64] = sums[offsets[1:]] - sums[offsets[:-1]]
    return result


def _segment_sum(values: Floats, offsets: NDArray[np.int64]) -> Floats:
    # Per-segment sums (not a difference of one global cumulative sum, which would lose
    # precision on long inputs): reduceat on the non-empty segments.
    out = np.zeros(offsets.shape[0] - 1, dtype=np.float64)
    starts = offsets[:-1]
    nonempty = np.flatnonzero(offsets[1:] > starts)
    if nonempty.shape[0]:
        out[nonempty] = np.add.reduceat(values, starts[nonempty])
    return out


def _ratio(
    numerator: NDArray[np.float64] | NDArray[np.int64],
    denominator: NDArray[np.float64] | NDArray[np.int64],
) -> Floats:
    num = np.asarray(numerator, dtype=np.float64)
    den = np.asarray(denominator, dtype=np.float64)
    out = np.zeros(num.shape[0], dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


def extra_measures(
    aligned: Aligned, measures: list[Measure], rel_level: int = 1
) -> dict[Measure, Floats]:
    """Per-query values of each extra measure, in ``aligned.query_ids`` order."""
    kernel = ExtraKernel(aligned)
    return {m: kernel.compute(m, rel_level) for m in measures}


__all__ = ["ExtraKernel", "extra_measures"]
