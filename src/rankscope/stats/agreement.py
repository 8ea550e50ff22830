"""Agreement statistics: Cohen's kappa (unweighted, linear, quadratic) and Kendall's tau-b.

Pure functions on label or score sequences; :mod:`rankscope.judge.agreement` applies them to
qrels (label agreement) and to system orderings under two qrels (ranking agreement).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from rankscope.errors import InputError


def confusion_matrix(
    a: Sequence[int], b: Sequence[int], labels: Sequence[int] | None = None
) -> tuple[tuple[int, ...], npt.NDArray[np.int64]]:
    """Counts ``m[i, j]`` of items labelled ``labels[i]`` by a and ``labels[j]`` by b."""
    if len(a) != len(b):
        raise InputError("the two label lists differ in length", value=(len(a), len(b)))
    cats = tuple(sorted(set(a) | set(b) | set(labels or ())))
    index = {c: i for i, c in enumerate(cats)}
    m = np.zeros((len(cats), len(cats)), dtype=np.int64)
    for x, y in zip(a, b, strict=True):
        m[index[x], index[y]] += 1
    return cats, m


def cohen_kappa(
    a: Sequence[int],
    b: Sequence[int],
    weights: str | None = None,
    labels: Sequence[int] | None = None,
) -> float | None:
    """Cohen's kappa of two raters; ``weights`` None, ``"linear"`` or ``"quadratic"``.

    Weighted disagreement uses the label values: ``|x - y| / (max - min)`` (linear) or its
    square (quadratic), over the categories seen (plus ``labels``). None when undefined: no
    items, or chance disagreement is zero (both raters used one and the same category).
    """
    if not a:
        return None
    cats, m = confusion_matrix(a, b, labels)
    n = m.sum()
    observed = m / n
    expected = np.outer(m.sum(axis=1), m.sum(axis=0)) / (n * n)
    values = np.asarray(cats, dtype=np.float64)
    span = values.max() - values.min() if len(cats) > 1 else 1.0
    diff = np.abs(values[:, None] - values[None, :]) / span
    if weights is None:
        w = (diff > 0).astype(np.float64)
    elif weights == "linear":
        w = diff
    elif weights == "quadratic":
        w = diff**2
    else:
        raise InputError(
            "unknown kappa weighting", value=weights, hint="use None, 'linear' or 'quadratic'"
        )
    chance = float((w * expected).sum())
    if chance == 0.0:
        return None
    return 1.0 - float((w * observed).sum()) / chance


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's tau-b (ties handled); None with fewer than two items or a constant side."""
    n = len(x)
    if n != len(y):
        raise InputError("the two score lists differ in length", value=(n, len(y)))
    if n < 2:
        return None
    concordant = discordant = ties_x = ties_y = 0
    for i in range(n):
        for j in range(i + 1, n):
            dx = x[i] - x[j]
            dy = y[i] - y[j]
            if dx == 0 and dy == 0:
                ties_x += 1
                ties_y += 1
            elif dx == 0:
                ties_x += 1
            elif dy == 0:
                ties_y += 1
            elif (dx > 0) == (dy > 0):
                concordant += 1
            else:
                discordant += 1
    pairs = n * (n - 1) // 2
    denom = math.sqrt((pairs - ties_x) * (pairs - ties_y))
    if denom == 0:
        return None
    return (concordant - discordant) / denom


__all__ = ["cohen_kappa", "confusion_matrix", "kendall_tau_b"]
