"""The bodies of experiments (camelCase on the wire): two arms compared on the records' measures
(``/api/metrics/retrieval/compare``), interleaving experiments (``/api/events/interleaving``),
and the calibration of the score threshold against labels (``/api/judgments/calibration``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rankscope.collect.wire import Camel


class CiPublic(Camel):
    low: float
    high: float
    level: float
    method: str


class MeasureDifference(Camel):
    measure: str
    test: Literal["welch", "paired_t"]
    n_a: int
    n_b: int
    mean_a: float | None
    mean_b: float | None
    delta: float | None = Field(description="mean(a) - mean(b)")
    ci: CiPublic | None
    bootstrap_ci: CiPublic | None
    effect_size: float | None
    p_value: float | None
    p_adjusted: float | None = Field(description="Holm over the measures compared")
    verdict: Literal["a", "b", "no_difference", "insufficient_data"]
    winner: str | None


class ArmsComparison(Camel):
    arms: list[str]
    paired: bool
    judgment_source: str = Field(description="judged, heuristic or clicks:<model>")
    alpha: float
    min_sample: int
    correction: str
    records: dict[str, int]
    measures: list[MeasureDifference]


class InterleavingPublic(Camel):
    experiment: str
    arms: list[str]
    impressions: int = Field(description="query ids with impressions in the experiment")
    clicked: int
    wins: int = Field(description="impressions the first arm won")
    losses: int
    ties: int
    preference: float
    p_value: float | None = Field(description="exact two-sided sign test")
    alpha: float
    min_impressions: int
    verdict: Literal["a", "b", "no_difference", "insufficient_data"]
    winner: str | None


class CalibrationGroup(Camel):
    group: str | None
    pairs: int
    positives: int
    current_threshold: float | None
    kappa_current: float | None
    agreement_current: float | None
    best_threshold: float | None
    kappa_best: float | None
    agreement_best: float | None
    applicable: bool = Field(description="the best threshold lies in 0..1 and can be set")


class CalibrationPublic(Camel):
    labels: str = Field(description="clicks:<model> or the qrels file")
    by: Literal["searchType", "arm"]
    min_grade: int
    groups: list[CalibrationGroup]


__all__ = [
    "ArmsComparison",
    "CalibrationGroup",
    "CalibrationPublic",
    "CiPublic",
    "InterleavingPublic",
    "MeasureDifference",
]
