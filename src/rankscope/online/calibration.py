"""Calibrate the score threshold of heuristic judgments against labels (clicks or an LLM).

Without judgments the service calls a document relevant when its score reaches a threshold.
Scores mean different things per engine and search type (BM25 is unbounded, cosine depends on
the model), so one threshold cannot fit all. Given (score, label) pairs of one engine or search
type, this measures how far the heuristic agrees with the labels (Cohen's kappa from
``rankscope.stats.cohen_kappa``, and raw agreement) at the threshold in force, and finds the
threshold with the highest kappa among candidates: the scores' percentiles 1..99 (at most
``max_candidates`` distinct values) plus the current threshold.

:func:`fit_grade_thresholds` does the same for the three thresholds that turn a click model's
values into grades 0-3 (:class:`rankscope.online.clicks.GradeThresholds`), given graded labels
of some of the pairs: the thresholds with the highest weighted kappa.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from rankscope.errors import InputError
from rankscope.online.clicks import GradeThresholds
from rankscope.stats import cohen_kappa


@dataclass(frozen=True)
class ThresholdCalibration:
    group: str
    n: int
    positives: int
    current_threshold: float | None
    kappa_current: float | None
    agreement_current: float | None
    best_threshold: float | None
    kappa_best: float | None
    agreement_best: float | None
    candidates: int


def agreement_at(
    scores: Sequence[float], labels: Sequence[bool], threshold: float
) -> tuple[float | None, float]:
    """Kappa (None when undefined) and the share of pairs where ``score >= threshold`` equals
    the label."""
    predicted = [int(s >= threshold) for s in scores]
    truth = [int(v) for v in labels]
    kappa = cohen_kappa(truth, predicted, labels=(0, 1))
    agree = sum(p == t for p, t in zip(predicted, truth, strict=True)) / len(truth)
    return kappa, agree


def calibrate_threshold(
    scores: Sequence[float],
    labels: Sequence[bool],
    *,
    group: str = "all",
    current: float | None = None,
    max_candidates: int = 99,
) -> ThresholdCalibration:
    """Agreement at ``current`` and the best threshold by Cohen's kappa."""
    if len(scores) != len(labels):
        raise InputError("scores and labels differ in length", value=(len(scores), len(labels)))
    n = len(scores)
    positives = int(sum(bool(v) for v in labels))
    if n == 0:
        return ThresholdCalibration(group, 0, 0, current, None, None, None, None, None, 0)
    kc = ac = None
    if current is not None:
        kc, ac = agreement_at(scores, labels, current)
    values = np.asarray(scores, dtype=np.float64)
    grid = np.unique(np.quantile(values, np.linspace(0.01, 0.99, max_candidates)))
    candidates = sorted({*grid.tolist(), *([current] if current is not None else [])})
    best: tuple[float, float, float] | None = None  # kappa, threshold, agreement
    for threshold in candidates:
        kappa, agree = agreement_at(scores, labels, threshold)
        if kappa is not None and (best is None or kappa > best[0]):
            best = (kappa, threshold, agree)
    return ThresholdCalibration(
        group=group,
        n=n,
        positives=positives,
        current_threshold=current,
        kappa_current=kc,
        agreement_current=ac,
        best_threshold=best[1] if best else None,
        kappa_best=best[0] if best else None,
        agreement_best=best[2] if best else None,
        candidates=len(candidates),
    )


@dataclass(frozen=True)
class GradeFit:
    """Thresholds fitted to labels, and the weighted kappa they reach on those labels."""

    thresholds: GradeThresholds
    kappa: float
    n: int
    candidates: int


def _grade_kappa(
    values: NDArray[np.float64], labels: list[int], cuts: tuple[float, float, float], weights: str
) -> float:
    predicted = GradeThresholds(*cuts).grades(values).tolist()
    kappa = cohen_kappa(labels, predicted, weights, labels=(0, 1, 2, 3))
    return -math.inf if kappa is None else kappa


def fit_grade_thresholds(
    values: Sequence[float],
    labels: Sequence[int],
    *,
    weights: str = "linear",
    candidates: int = 100,
    coarse: int = 16,
) -> GradeFit:
    """The grade thresholds with the highest weighted Cohen's kappa (``weights``: linear,
    quadratic or None) of ``GradeThresholds.grade(value)`` against the labels (grades 0-3).

    Candidates are the values' quantiles at ``candidates`` evenly spaced levels in (0, 1)
    (distinct ones). Every non-decreasing triple of every ``candidates // coarse``-th candidate
    is tried, then each threshold in turn moves to the best candidate between its neighbours
    until none improves (a local search: not certain to find the global best)."""
    if len(values) != len(labels):
        raise InputError("values and labels differ in length", value=(len(values), len(labels)))
    if not values:
        raise InputError("fitting grade thresholds needs labelled values")
    if len(set(labels)) < 2:
        raise InputError(
            "fitting grade thresholds needs labels of at least two grades",
            value=sorted(set(labels)),
            hint="label pairs of several grades: with one grade any thresholds agree by chance",
        )
    v = np.asarray(values, dtype=np.float64)
    truth = [int(g) for g in labels]
    grid = np.unique(np.quantile(v, np.linspace(0, 1, candidates + 2)[1:-1])).tolist()
    step = max(1, len(grid) // coarse)
    rough = grid[::step]
    best: tuple[float, tuple[float, float, float]] = (-np.inf, (grid[0], grid[0], grid[0]))
    for i, one in enumerate(rough):
        for j in range(i, len(rough)):
            for three in rough[j:]:
                cuts = (one, rough[j], three)
                kappa = _grade_kappa(v, truth, cuts, weights)
                if kappa > best[0]:
                    best = (kappa, cuts)
    improved = True
    while improved:
        improved = False
        for k in range(3):
            cuts = best[1]
            low = cuts[k - 1] if k > 0 else -np.inf
            high = cuts[k + 1] if k < 2 else np.inf
            for c in grid:
                if low <= c <= high and c != cuts[k]:
                    moved = list(cuts)
                    moved[k] = c
                    trial = (moved[0], moved[1], moved[2])
                    kappa = _grade_kappa(v, truth, trial, weights)
                    if kappa > best[0]:
                        best = (kappa, trial)
                        improved = True
    assert np.isfinite(best[0])  # two grades among the labels: chance disagreement > 0
    return GradeFit(GradeThresholds(*best[1]), float(best[0]), len(truth), len(grid))


__all__ = [
    "GradeFit",
    "ThresholdCalibration",
    "agreement_at",
    "calibrate_threshold",
    "fit_grade_thresholds",
]
