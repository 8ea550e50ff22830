"""The value a comparison of systems gives: :class:`Comparison`, its measures
(:class:`MeasureComparison`) and their rows (:class:`SystemRow`), and its JSON form.

:func:`rankscope.stats.compare` makes it; the command line, the benchmark (``results.json``
stores it per view, see :mod:`rankscope.bench.results`) and every report render it.
:meth:`Comparison.to_dict` is strict JSON (a non-finite number becomes ``null``) and
:meth:`Comparison.from_dict` reads it back: ``from_dict(c.to_dict())`` equals ``c`` up to
non-finite numbers, which come back as NaN where a number is required and as None where it is
optional (:func:`normalised` applies the same round trip, so a value kept in memory and one read
from a file compare equal).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from rankscope.errors import InputError, MeasureError
from rankscope.stats.intervals import Interval
from rankscope.stats.multiple import Anova, PairResult, Pairwise
from rankscope.stats.planning import PowerPlan
from rankscope.stats.quantity import Quantity

Family = Literal["measure", "all"]
MeanInterval = Literal["t", "bootstrap"]

TEST_NAMES = {
    "t": "paired t-test",
    "randomization": "paired randomization test",
    "bootstrap": "paired bootstrap test (studentized)",
    "wilcoxon": "Wilcoxon signed-rank test",
    "sign": "sign test",
    "tukey": "Tukey HSD (queries as blocks)",
    "rtukey": "randomised Tukey HSD",
}
CORRECTION_NAMES = {
    "holm": "Holm",
    "bonferroni": "Bonferroni",
    "bh": "Benjamini-Hochberg",
    "none": "no correction",
    "tukey": "Tukey (family-wise over all pairs)",
}


@dataclass(frozen=True, slots=True)
class SystemRow:
    """One system on one measure.

    The fields from ``delta`` on compare the system with the baseline (``system - baseline``);
    they are None on the baseline's own row. ``p_value`` is the test's, ``p_adjusted`` the
    corrected one that decides ``significant`` (``p_adjusted <= alpha``); ``direction`` is
    ``"better"`` or ``"worse"`` when significant, else None.
    """

    measure: str
    system: str
    is_baseline: bool
    mean: float
    mean_interval: Interval
    delta: float | None = None
    delta_interval: Interval | None = None
    effect_size: float | None = None
    statistic: float | None = None
    p_value: float | None = None
    p_adjusted: float | None = None
    wins: int | None = None
    ties: int | None = None
    losses: int | None = None
    significant: bool = False
    direction: Literal["better", "worse"] | None = None
    plan: PowerPlan | None = None


@dataclass(frozen=True, slots=True)
class MeasureComparison:
    """All systems on one measure (``quantity``: its name, and whether higher is better):
    rows in system order, the ANOVA, and every pair of systems (Tukey tests, or
    ``all_pairs=True``; None otherwise). ``constant`` is True when every system scores the same
    value on every query."""

    quantity: Quantity
    rows: tuple[SystemRow, ...]
    anova: Anova
    pairs: Pairwise | None
    constant: bool

    @property
    def measure(self) -> str:
        """The quantity's name."""
        return self.quantity.name

    def row(self, system: str) -> SystemRow:
        for r in self.rows:
            if r.system == system:
                return r
        raise InputError(f"no system named {system!r}", value=[r.system for r in self.rows])


@dataclass(frozen=True, slots=True)
class Comparison:
    """The result of :func:`compare`.

    - ``test``, ``correction`` (as applied: ``tukey`` for the Tukey tests), ``scope`` (which
      p-values were corrected together: each measure's, or ``all``; :attr:`family` says it in
      words) and ``family_size``.
    - ``alpha`` and ``level`` (of every interval, ``1 - alpha`` by default), ``seed`` and
      ``resamples`` (None when the test draws nothing).
    - ``queries`` (n, the same for every comparison), ``query_set``, and per system
      ``filled`` (queries it lacked, scored 0) and ``dropped`` (its queries outside the set).
    - :attr:`effect_size`: how effect sizes are defined (``mean(d)/sd(d)``, d the per-query
      differences, or ``delta/sqrt(V_E)``, V_E the residual variance of the two-way ANOVA);
      :attr:`delta_interval` and :attr:`mean_interval`: how the intervals are computed
      (``mean_method``: ``t`` or ``bootstrap``).
    - ``warnings``: what deserves caution (few queries, zero variance, constant measures).
    """

    systems: tuple[str, ...]
    baseline: str
    measures: tuple[MeasureComparison, ...]
    test: str
    correction: str
    scope: Family
    family_size: int
    alpha: float
    level: float
    seed: int
    resamples: int | None
    queries: int
    query_set: str
    filled: tuple[int, ...]
    dropped: tuple[int, ...]
    mean_method: MeanInterval
    exact: bool
    warnings: tuple[str, ...]

    def measure(self, name: str | Quantity) -> MeasureComparison:
        for m in self.measures:
            if m.measure == str(name):
                return m
        raise InputError(
            f"measure {str(name)!r} was not compared", value=[m.measure for m in self.measures]
        )

    def row(self, measure: str | Quantity, system: str) -> SystemRow:
        return self.measure(measure).row(system)

    @property
    def family(self) -> str:
        """Which p-values were corrected together, in words."""
        others, base = len(self.systems) - 1, self.baseline
        if self.correction == "tukey":
            return f"all {self.family_size} pairs of systems within each measure"
        if self.scope == "all":
            return (
                f"{self.family_size} comparisons with {base} ({others} systems × "
                f"{len(self.measures)} measures)"
            )
        return f"{others} comparison{'s' if others != 1 else ''} with {base} per measure"

    @property
    def effect_size(self) -> str:
        """How effect sizes are defined."""
        return "delta/sqrt(V_E)" if self.test in ("tukey", "rtukey") else "mean(d)/sd(d)"

    @property
    def delta_interval(self) -> str:
        """How the intervals of the differences are computed."""
        if self.test == "tukey":
            return "Tukey, simultaneous over all pairs"
        if self.test == "rtukey":
            return "randomised Tukey, simultaneous over all pairs"
        if self.test == "bootstrap":
            return "bootstrap BCa"
        return "paired t"

    @property
    def mean_interval(self) -> str:
        """How the intervals of the means are computed."""
        return "t" if self.mean_method == "t" else "bootstrap (BCa)"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (strict JSON: a non-finite number becomes ``null``); the
        sentences (``test_name``, ``family``...) are there for readers, :meth:`from_dict` reads
        the values."""
        return {
            "test": self.test,
            "test_name": TEST_NAMES[self.test],
            "correction": self.correction,
            "scope": self.scope,
            "family": self.family,
            "family_size": self.family_size,
            "alpha": self.alpha,
            "level": self.level,
            "seed": self.seed,
            "resamples": self.resamples,
            "exact": self.exact,
            "queries": self.queries,
            "query_set": self.query_set,
            "baseline": self.baseline,
            "systems": [
                {"name": s, "filled": f, "dropped": d}
                for s, f, d in zip(self.systems, self.filled, self.dropped, strict=True)
            ],
            "effect_size": self.effect_size,
            "delta_interval": self.delta_interval,
            "mean_interval": self.mean_interval,
            "mean_method": self.mean_method,
            "warnings": list(self.warnings),
            "measures": [_measure_dict(m, self.systems) for m in self.measures],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Comparison:
        """The comparison :meth:`to_dict` wrote; a dictionary of another shape raises
        :class:`~rankscope.errors.InputError` naming the first key that does not fit."""
        try:
            for key, allowed in _CHOICES.items():
                if data[key] not in allowed:
                    raise ValueError(f"{key} {data[key]!r} is not one of {', '.join(allowed)}")
            systems = tuple(str(s["name"]) for s in data["systems"])
            index = {name: i for i, name in enumerate(systems)}
            return cls(
                systems=systems,
                baseline=str(data["baseline"]),
                measures=tuple(_measure_from(m, index) for m in data["measures"]),
                test=str(data["test"]),
                correction=str(data["correction"]),
                scope=cast(Family, data["scope"]),
                family_size=int(data["family_size"]),
                alpha=float(data["alpha"]),
                level=float(data["level"]),
                seed=int(data["seed"]),
                resamples=None if data["resamples"] is None else int(data["resamples"]),
                queries=int(data["queries"]),
                query_set=str(data["query_set"]),
                filled=tuple(int(s["filled"]) for s in data["systems"]),
                dropped=tuple(int(s["dropped"]) for s in data["systems"]),
                mean_method=cast(MeanInterval, data["mean_method"]),
                exact=bool(data["exact"]),
                warnings=tuple(str(w) for w in data["warnings"]),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise InputError(
                f"not a comparison as rankscope writes it: {type(error).__name__}: {error}",
                hint="give what Comparison.to_dict or rankscope compare --format json wrote",
            ) from None


#: what the enumerated keys of a comparison's JSON form may hold
_CHOICES: dict[str, tuple[str, ...]] = {
    "test": tuple(TEST_NAMES),
    "correction": tuple(CORRECTION_NAMES),
    "scope": ("measure", "all"),
    "mean_method": ("t", "bootstrap"),
}


def normalised(comparison: Comparison) -> Comparison:
    """``comparison`` as it reads back from its JSON form (non-finite optional numbers become
    None): what ``results.json`` keeps, so the value in memory equals the value read back."""
    return Comparison.from_dict(comparison.to_dict())


def row_to_dict(r: SystemRow) -> dict[str, Any]:
    """One row as :meth:`Comparison.to_dict` writes it."""
    return {
        "system": r.system,
        "is_baseline": r.is_baseline,
        "mean": _num(r.mean),
        "mean_interval": _interval_dict(r.mean_interval),
        "delta": _num(r.delta),
        "delta_interval": _interval_dict(r.delta_interval),
        "effect_size": _num(r.effect_size),
        "statistic": _num(r.statistic),
        "p_value": _num(r.p_value),
        "p_adjusted": _num(r.p_adjusted),
        "wins": r.wins,
        "ties": r.ties,
        "losses": r.losses,
        "significant": r.significant,
        "direction": r.direction,
        "plan": None
        if r.plan is None
        else {
            "queries": r.plan.queries,
            "sd_difference": _num(r.plan.sd_difference),
            "delta": _num(r.plan.delta),
            "power": _num(r.plan.power),
            "alpha": r.plan.alpha,
            "queries_needed": r.plan.queries_needed,
            "min_detectable_delta": _num(r.plan.min_detectable_delta),
        },
    }


def row_from_dict(data: Mapping[str, Any], measure: str) -> SystemRow:
    """One row as :func:`row_to_dict` wrote it, on ``measure``."""
    plan = data["plan"]
    direction = data["direction"]
    if direction not in (None, "better", "worse"):
        raise ValueError(f"direction {direction!r}")
    return SystemRow(
        measure=measure,
        system=str(data["system"]),
        is_baseline=bool(data["is_baseline"]),
        mean=_float(data["mean"]),
        mean_interval=_interval_from(data["mean_interval"]),
        delta=_optional(data["delta"]),
        delta_interval=None
        if data["delta_interval"] is None
        else _interval_from(data["delta_interval"]),
        effect_size=_optional(data["effect_size"]),
        statistic=_optional(data["statistic"]),
        p_value=_optional(data["p_value"]),
        p_adjusted=_optional(data["p_adjusted"]),
        wins=_count(data["wins"]),
        ties=_count(data["ties"]),
        losses=_count(data["losses"]),
        significant=bool(data["significant"]),
        direction=direction,
        plan=None
        if plan is None
        else PowerPlan(
            queries=int(plan["queries"]),
            sd_difference=_float(plan["sd_difference"]),
            delta=_float(plan["delta"]),
            alpha=float(plan["alpha"]),
            power=_float(plan["power"]),
            queries_needed=_count(plan["queries_needed"]),
            min_detectable_delta=_float(plan["min_detectable_delta"]),
        ),
    )


def _num(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return float(value)


def _float(value: Any) -> float:
    """A required number: ``null`` (what a non-finite one was written as) is NaN."""
    return math.nan if value is None else float(value)


def _optional(value: Any) -> float | None:
    return None if value is None else float(value)


def _count(value: Any) -> int | None:
    return None if value is None else int(value)


def _interval_dict(interval: Interval | None) -> dict[str, Any] | None:
    if interval is None:
        return None
    return {
        "low": _num(interval.low),
        "high": _num(interval.high),
        "level": interval.level,
        "method": interval.method,
        **({"clipped": True} if interval.clipped else {}),
    }


def _interval_from(data: Mapping[str, Any]) -> Interval:
    return Interval(
        _float(data["low"]),
        _float(data["high"]),
        float(data["level"]),
        str(data["method"]),
        data.get("clipped") is True,
    )


def _measure_dict(m: MeasureComparison, systems: tuple[str, ...]) -> dict[str, Any]:
    a = m.anova
    return {
        "measure": m.measure,
        "higher_is_better": m.quantity.higher_is_better,
        "constant": m.constant,
        "anova": {
            "f": _num(a.f),
            "p_value": _num(a.p_value),
            "systems": a.systems,
            "queries": a.queries,
            "df_systems": a.df_systems,
            "df_queries": a.df_queries,
            "df_residual": a.df_residual,
            "ss_systems": _num(a.ss_systems),
            "ss_queries": _num(a.ss_queries),
            "ss_residual": _num(a.ss_residual),
            "ss_total": _num(a.ss_total),
            "ms_residual": _num(a.ms_residual),
        },
        "rows": [row_to_dict(r) for r in m.rows],
        "pairwise": None
        if m.pairs is None
        else {
            "test": m.pairs.test,
            "correction": m.pairs.correction,
            "resamples": m.pairs.resamples,
        },
        "pairs": None
        if m.pairs is None
        else [
            {
                "first": systems[p.first],
                "second": systems[p.second],
                "delta": _num(p.delta),
                "interval": _interval_dict(p.interval),
                "effect_size": _num(p.effect_size),
                "statistic": _num(p.statistic),
                "p_value": _num(p.p_value),
                "p_adjusted": _num(p.p_adjusted),
            }
            for p in m.pairs.pairs
        ],
    }


def _measure_from(data: Mapping[str, Any], index: dict[str, int]) -> MeasureComparison:
    name = str(data["measure"])
    a = data["anova"]
    anova = Anova(
        systems=int(a["systems"]),
        queries=int(a["queries"]),
        ss_systems=_float(a["ss_systems"]),
        ss_queries=_float(a["ss_queries"]),
        ss_residual=_float(a["ss_residual"]),
        ss_total=_float(a["ss_total"]),
        df_systems=int(a["df_systems"]),
        df_queries=int(a["df_queries"]),
        df_residual=int(a["df_residual"]),
        ms_residual=_float(a["ms_residual"]),
        f=_float(a["f"]),
        p_value=_float(a["p_value"]),
    )
    pairs = None
    if data["pairs"] is not None:
        meta = data["pairwise"]
        pairs = Pairwise(
            test=str(meta["test"]),
            systems=len(index),
            queries=anova.queries,
            correction=str(meta["correction"]),
            pairs=tuple(
                PairResult(
                    first=index[p["first"]],
                    second=index[p["second"]],
                    delta=_float(p["delta"]),
                    statistic=_float(p["statistic"]),
                    p_value=_float(p["p_value"]),
                    p_adjusted=_float(p["p_adjusted"]),
                    effect_size=_float(p["effect_size"]),
                    interval=_interval_from(p["interval"]),
                )
                for p in data["pairs"]
            ),
            resamples=_count(meta["resamples"]),
        )
    return MeasureComparison(
        quantity=_quantity(name, bool(data["higher_is_better"])),
        rows=tuple(row_from_dict(r, name) for r in data["rows"]),
        anova=anova,
        pairs=pairs,
        constant=bool(data["constant"]),
    )


def _quantity(name: str, higher_is_better: bool) -> Quantity:
    """The quantity named ``name``: the measure it spells when it is one (as
    :meth:`Quantity.of` makes it), else a plain per-query value."""
    from rankscope.metrics.names import parse_measure  # lazily, as in stats/matrix.py

    try:
        measure = parse_measure(name)
    except MeasureError:
        return Quantity(name, higher_is_better)
    if str(measure) != name:
        return Quantity(name, higher_is_better)
    return Quantity(name, higher_is_better, measure)


__all__ = [
    "CORRECTION_NAMES",
    "TEST_NAMES",
    "Comparison",
    "MeasureComparison",
    "SystemRow",
    "normalised",
    "row_from_dict",
    "row_to_dict",
]
