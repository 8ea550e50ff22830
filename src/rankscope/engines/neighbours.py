"""Nearest rows by score, with a fixed tie rule: what the ``vector`` engine ranks with and what
the vector stores' exact neighbours (``ann_recall@k``) are computed with."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

#: exact cosine scores within this much of the k-th neighbour's count as tied with it (float32
#: rounding of a dot product of unit vectors is about 1e-7)
EXACT_TIE_TOLERANCE = 1e-6

Scores = npt.NDArray[Any]


def top_k(scores: Scores, k: int) -> list[int]:
    """Indices of the ``k`` highest scores, best first; ties in index order."""
    n = int(scores.shape[0])
    if k < n:
        part = np.argpartition(-scores, k - 1)[:k]
        # keep every row tied with the k-th score so the tie order does not depend on argpartition
        cutoff = scores[part].min()
        part = np.flatnonzero(scores >= cutoff)
    else:
        part = np.arange(n)
    order = part[np.lexsort((part, -scores[part]))]
    return [int(i) for i in order[:k]]


def exact_top(scores: Scores, k: int, tolerance: float = EXACT_TIE_TOLERANCE) -> list[int]:
    """Rows of the ``k`` highest scores, best first (ties in row order), followed by every
    other row whose score is within ``tolerance`` of the k-th: the exact neighbours and the
    rows an approximate search may return instead of the k-th without losing anything."""
    n = int(scores.shape[0])
    if n == 0 or k <= 0:
        return []
    first = top_k(scores, min(k, n))
    cutoff = float(scores[first[-1]]) - tolerance
    chosen = set(first)
    tied = np.flatnonzero(scores >= cutoff)
    rest = [int(i) for i in tied if int(i) not in chosen]
    rest.sort(key=lambda i: (-float(scores[i]), i))
    return first + rest
