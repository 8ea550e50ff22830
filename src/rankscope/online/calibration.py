"""Calibrate the score threshold of heuristic judgments against labels (clicks or an LLM).

Without judgments the service calls a document relevant when its score reaches a threshold.
Scores mean different things per engine and search type (BM25 is unbounded, cosine depends on
the model), so one threshold cannot fit all. Given (score, label) pairs of one engine or search
type, this measures how far the heuristic agrees with the labels (Cohen's kappa from
``rankscope.stats.cohen_kappa``, and raw agreement) at the threshold in force, and finds the
threshold with the highest kappa among candidates: the scores' percentiles 1..99 (at most
``max_candidates`` distinct values) plus the current threshold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rankscope.errors import InputError
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


__all__ = ["ThresholdCalibration", "agreement_at", "calibrate_threshold"]
