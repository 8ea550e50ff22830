"""Online A/B comparison of two arms on per-record measures, with a refusal to call a winner on
too little data.

Different queries reach different arms, so the default is **unpaired**: per measure, Welch's
t test of the two arms' per-record values (``rankscope.stats.welch_t``) with a percentile
bootstrap interval of the difference (each arm resampled on its own). **Paired** (asked for):
over the queries seen in both arms (a query's values averaged within each arm), Student's
paired t test (``rankscope.stats.paired_t``). The p-values of the measures compared together
are Holm-corrected (``rankscope.stats.adjust_pvalues``), so calling any measure's winner keeps
the family-wise error at ``alpha``.

Verdict per measure: ``insufficient_data`` while either arm has fewer than ``min_sample``
values (paired: fewer than ``min_sample`` common queries), else the arm with the higher mean
when the corrected p <= alpha, else ``no_difference``. Every measure here is better when
higher.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from rankscope.stats import (
    Interval,
    PairedTest,
    TwoSampleTest,
    adjust_pvalues,
    paired_t,
    welch_t,
)

Verdict = Literal["a", "b", "no_difference", "insufficient_data"]
DEFAULT_MIN_SAMPLE = 30


@dataclass(frozen=True)
class ArmDifference:
    """One measure: ``delta = mean(a) - mean(b)`` with its interval and test."""

    measure: str
    test: Literal["welch", "paired_t"]
    n_a: int
    n_b: int
    mean_a: float | None
    mean_b: float | None
    delta: float | None
    interval: Interval | None
    bootstrap: Interval | None
    effect_size: float | None
    p_value: float | None
    p_adjusted: float | None
    verdict: Verdict
    winner: str | None


@dataclass(frozen=True)
class ArmComparison:
    names: tuple[str, str]
    paired: bool
    alpha: float
    min_sample: int
    correction: str
    measures: tuple[ArmDifference, ...]

    def measure(self, name: str) -> ArmDifference:
        for m in self.measures:
            if m.measure == name:
                return m
        raise KeyError(name)


def _verdict(
    n: int, min_sample: int, p: float | None, delta: float | None, alpha: float
) -> Verdict:
    if n < min_sample or p is None or delta is None:
        return "insufficient_data"
    if p <= alpha and delta != 0:
        return "a" if delta > 0 else "b"
    return "no_difference"


def _holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm-adjusted p-values of the measures that could be tested (None stays None)."""
    tested = [p for p in p_values if p is not None]
    adjusted = iter(adjust_pvalues(tested, "holm").tolist()) if tested else iter(())
    return [None if p is None else next(adjusted) for p in p_values]


def _insufficient(
    measure: str, test: Literal["welch", "paired_t"], n_a: int, n_b: int
) -> ArmDifference:
    """A measure with too few values in an arm to test at all."""
    return ArmDifference(
        measure=measure,
        test=test,
        n_a=n_a,
        n_b=n_b,
        mean_a=None,
        mean_b=None,
        delta=None,
        interval=None,
        bootstrap=None,
        effect_size=None,
        p_value=None,
        p_adjusted=None,
        verdict="insufficient_data",
        winner=None,
    )


@dataclass(frozen=True)
class _Decision:
    """What turns a test into a verdict: the arms' names, alpha and the minimum sample."""

    names: tuple[str, str]
    alpha: float
    min_sample: int

    def difference(
        self,
        measure: str,
        test: TwoSampleTest | PairedTest,
        *,
        n_a: int,
        n_b: int,
        means: tuple[float, float],
        bootstrap: Interval | None,
        p_adjusted: float,
    ) -> ArmDifference:
        verdict = _verdict(min(n_a, n_b), self.min_sample, p_adjusted, test.delta, self.alpha)
        return ArmDifference(
            measure=measure,
            test="welch" if isinstance(test, TwoSampleTest) else "paired_t",
            n_a=n_a,
            n_b=n_b,
            mean_a=means[0],
            mean_b=means[1],
            delta=test.delta,
            interval=test.interval,
            bootstrap=bootstrap,
            effect_size=test.effect_size,
            p_value=test.p_value,
            p_adjusted=p_adjusted,
            verdict=verdict,
            winner={"a": self.names[0], "b": self.names[1]}.get(verdict),
        )


def compare_arms(
    values: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    names: tuple[str, str] = ("a", "b"),
    alpha: float = 0.05,
    min_sample: int = DEFAULT_MIN_SAMPLE,
    bootstrap: int = 2000,
    seed: int = 0,
) -> ArmComparison:
    """Unpaired: ``values[measure] = (values of arm a, values of arm b)``, one per record."""
    raw: list[tuple[str, int, int, TwoSampleTest | None]] = []
    for measure, (a, b) in values.items():
        test = None
        if len(a) >= 2 and len(b) >= 2:
            test = welch_t(a, b, level=1 - alpha, bootstrap=bootstrap, seed=seed)
        raw.append((measure, len(a), len(b), test))
    adjusted = _holm([None if t is None else t.p_value for *_, t in raw])
    decide = _Decision(names, alpha, min_sample)
    out = []
    for (measure, n_a, n_b, t), p_adj in zip(raw, adjusted, strict=True):
        if t is None or p_adj is None:
            out.append(_insufficient(measure, "welch", n_a, n_b))
            continue
        out.append(
            decide.difference(
                measure,
                t,
                n_a=n_a,
                n_b=n_b,
                means=(t.mean_a, t.mean_b),
                bootstrap=t.bootstrap,
                p_adjusted=p_adj,
            )
        )
    return ArmComparison(names, False, alpha, min_sample, "holm", tuple(out))


def compare_arms_paired(
    values: Mapping[str, tuple[Mapping[str, Sequence[float]], Mapping[str, Sequence[float]]]],
    *,
    names: tuple[str, str] = ("a", "b"),
    alpha: float = 0.05,
    min_sample: int = DEFAULT_MIN_SAMPLE,
) -> ArmComparison:
    """Paired over queries: ``values[measure] = ({query: values in a}, {query: values in b})``;
    only queries present in both arms count, each as the mean of its values per arm."""
    raw = []
    for measure, (a, b) in values.items():
        common = sorted(set(a) & set(b))
        x = [float(np.mean(a[q])) for q in common]
        y = [float(np.mean(b[q])) for q in common]
        test = paired_t(x, y, level=1 - alpha) if len(common) >= 2 else None
        raw.append((measure, len(common), x, y, test))
    adjusted = _holm([None if t is None else t.p_value for *_, t in raw])
    decide = _Decision(names, alpha, min_sample)
    out = []
    for (measure, n, x, y, test), p_adj in zip(raw, adjusted, strict=True):
        if test is None or p_adj is None:
            out.append(_insufficient(measure, "paired_t", n, n))
            continue
        out.append(
            decide.difference(
                measure,
                test,
                n_a=n,
                n_b=n,
                means=(float(np.mean(x)), float(np.mean(y))),
                bootstrap=None,
                p_adjusted=p_adj,
            )
        )
    return ArmComparison(names, True, alpha, min_sample, "holm", tuple(out))


__all__ = [
    "DEFAULT_MIN_SAMPLE",
    "ArmComparison",
    "ArmDifference",
    "Verdict",
    "compare_arms",
    "compare_arms_paired",
]
