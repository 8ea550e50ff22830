"""Segment operations: per-query counts, sums, running sums and maxima without a Python loop
per query.

Rows of query ``q`` are ``offsets[q]:offsets[q+1]``.  The ``seq_*`` sums are *sequential* (left
to right within a query, as trec_eval's C loops add), not numpy's pairwise sums, so that results
agree with trec_eval to the last bit where the order of additions matters.  They run on a padded
2-D array per group of queries of similar length (cumulative ufuncs along axis 1 are sequential),
so padding costs at most about twice the rows.  :func:`segment_sum` is numpy's faster pairwise
sum, for measures that trec_eval does not define.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from rankscope.data import compute as pc  # np.unique imports numpy.ma

Floats = NDArray[np.float64]
Ints = NDArray[np.int64]


def offsets_from_counts(counts: Ints) -> Ints:
    out = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def segment_count(values: NDArray[np.bool_] | Ints, offsets: Ints) -> Ints:
    """Per segment: the sum of integer (or boolean) ``values`` over its rows; exact."""
    cum = counts_before(values, offsets)
    result: Ints = cum[offsets[1:]] - cum[offsets[:-1]]
    return result


def segment_sum(values: Floats, offsets: Ints) -> Floats:
    """Per segment: numpy's (pairwise) sum of its rows, 0.0 when empty.

    Per-segment sums, not a difference of one global running sum, which would lose precision
    on long inputs.
    """
    out = np.zeros(offsets.shape[0] - 1, dtype=np.float64)
    starts = offsets[:-1]
    nonempty = np.flatnonzero(offsets[1:] > starts)
    if nonempty.shape[0]:
        out[nonempty] = np.add.reduceat(values, starts[nonempty])
    return out


def top_rows(offsets: Ints, k: int) -> tuple[Ints, Ints]:
    """The first ``k`` rows of every segment: their indices and the segments' new offsets."""
    kept = np.minimum(np.diff(offsets), k)
    new_offsets = offsets_from_counts(kept)
    rows = positions(new_offsets) + np.repeat(offsets[:-1], kept)
    return rows, new_offsets


def segment_ids(offsets: Ints) -> Ints:
    """Per row: the index of its segment."""
    return np.repeat(np.arange(offsets.shape[0] - 1, dtype=np.int64), np.diff(offsets))


def positions(offsets: Ints) -> Ints:
    """Per row: its 0-based position within its segment."""
    n = int(offsets[-1])
    return np.arange(n, dtype=np.int64) - np.repeat(offsets[:-1], np.diff(offsets))


def counts_before(mask: NDArray[np.bool_] | Ints, offsets: Ints) -> Ints:
    """Global inclusive prefix counts of ``mask`` with a leading 0 (length rows + 1).

    The count of ``mask`` rows among rows ``a:b`` is ``c[b] - c[a]``; integers, so exact.
    ``offsets`` is not read (it documents what the counts are for).
    """
    out = np.zeros(mask.shape[0] + 1, dtype=np.int64)
    np.cumsum(mask, out=out[1:])
    return out


def count_in_top(cum: Ints, offsets: Ints, k: Ints | int) -> Ints:
    """Per segment: how many marked rows (``cum``, see :func:`counts_before`) are in its top k."""
    start = offsets[:-1]
    end = np.minimum(start + np.maximum(k, 0), offsets[1:])
    return cum[end] - cum[start]


def _padded_groups(offsets: Ints) -> list[tuple[Ints, Ints, Ints, Ints, int]]:
    """Groups of segments padded to a common length, each as
    (row indices, local segment index per row, position per row, segments, width)."""
    counts = np.diff(offsets)
    n = int(offsets[-1])
    if n == 0:
        return []
    nonempty = np.flatnonzero(counts > 0)
    width = int(counts.max())
    if nonempty.shape[0] * width <= 2 * n + 4096:
        groups = [nonempty]
    else:  # group by power of two of the length: padding at most doubles the rows
        bits = np.zeros(counts.shape[0], dtype=np.int64)
        bits[nonempty] = np.ceil(np.log2(counts[nonempty])).astype(np.int64)
        groups = [nonempty[bits[nonempty] == b] for b in pc.distinct(bits[nonempty]).tolist()]
    out = []
    for segs in groups:
        c = counts[segs]
        local_offsets = offsets_from_counts(c)
        total = int(local_offsets[-1])
        local = np.repeat(np.arange(segs.shape[0], dtype=np.int64), c)
        pos = np.arange(total, dtype=np.int64) - local_offsets[:-1][local]
        rows = offsets[:-1][segs][local] + pos
        out.append((rows, local, pos, segs, int(c.max())))
    return out


def _apply_padded(
    values: Floats,
    offsets: Ints,
    fill: float,
    op: Callable[[Floats], Floats],
) -> Floats:
    out = np.empty(values.shape[0], dtype=np.float64)
    for rows, local, pos, segs, width in _padded_groups(offsets):
        grid = np.full((segs.shape[0], width), fill, dtype=np.float64)
        grid[local, pos] = values[rows]
        out[rows] = op(grid)[local, pos]
    return out


def seq_cumsum(values: Floats, offsets: Ints) -> Floats:
    """Per row: the running sum of its segment up to and including it, added left to right."""
    return _apply_padded(values, offsets, 0.0, lambda g: np.cumsum(g, axis=1))


def seq_sum(values: Floats, offsets: Ints) -> Floats:
    """Per segment: the left-to-right sum of its rows (0.0 when empty)."""
    sums = np.zeros(offsets.shape[0] - 1, dtype=np.float64)
    if values.shape[0] == 0:
        return sums
    running = seq_cumsum(values, offsets)
    ends = offsets[1:]
    nonempty = ends > offsets[:-1]
    sums[nonempty] = running[ends[nonempty] - 1]
    return sums


def seq_sum_in_top(running: Floats, cum_rows: Ints, offsets: Ints) -> Floats:
    """Per segment: the running sum after its first ``cum_rows`` rows (0.0 when none).

    ``running`` comes from :func:`seq_cumsum` over the same ``offsets``.
    """
    out = np.zeros(offsets.shape[0] - 1, dtype=np.float64)
    has = cum_rows > 0
    out[has] = running[offsets[:-1][has] + cum_rows[has] - 1]
    return out


def suffix_max(values: Floats, offsets: Ints) -> Floats:
    """Per row: the maximum of its segment's values from it to the segment's end."""

    def op(g: Floats) -> Floats:
        return np.maximum.accumulate(g[:, ::-1], axis=1)[:, ::-1]

    return _apply_padded(values, offsets, -math.inf, op)


def log2_table(n: int) -> Floats:
    """``log2(i + 2)`` for ``i`` in ``range(n)``, from the C library (as trec_eval computes it)."""
    return np.array([math.log2(i + 2) for i in range(max(n, 0))], dtype=np.float64)


def power_table(p: float, n: int) -> Floats:
    """``p**i`` for ``i`` in ``range(n + 1)`` by repeated multiplication (trec_eval's ``cur_p``)."""
    steps = np.full(n + 1, p, dtype=np.float64)
    steps[0] = 1.0
    return np.asarray(np.cumprod(steps), dtype=np.float64)
