"""Compare systems on one query set: the entry point tables, benchmarks and services call.

:func:`compare` takes a :class:`~rankscope.stats.matrix.ScoreMatrix` and returns a
:class:`Comparison`: for each measure and system, the mean with its interval and, against the
baseline, the difference with its interval, effect size, p-value (corrected over a stated family),
wins/ties/losses, a significance mark, and planning figures; plus the two-way ANOVA of each
measure and, for the Tukey tests (or ``all_pairs=True``), every pair of systems.
:func:`pairwise` tests every pair of systems of one matrix. Reading qrels and run files first is
:func:`rankscope.compare_io.compare_runs` (also ``rankscope.stats.compare_runs``).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from rankscope.errors import InputError
from rankscope.stats._checks import (
    TOLERANCE,
    StatsWarning,
    as_matrix,
    check_alpha,
    check_resamples,
    clean_differences,
    sd,
)
from rankscope.stats.intervals import Interval, bootstrap_intervals, check_level, t_interval
from rankscope.stats.matrix import ScoreMatrix
from rankscope.stats.multiple import (
    CORRECTIONS,
    Anova,
    Correction,
    PairResult,
    Pairwise,
    adjust_pvalues,
    anova_two_way,
    correct_pairwise,
    randomized_tukey_hsd,
    tukey_hsd,
)
from rankscope.stats.paired import (
    PairedTest,
    ZeroMethod,
    bootstrap_pvalues,
    check_bootstrap_queries,
    difference_interval,
    from_differences,
    mean_difference,
    paired_t,
    randomization_pvalues,
    sign_test,
    sum_difference,
    t_statistic,
    wilcoxon_test,
)
from rankscope.stats.planning import PowerPlan, power_plan

Test = Literal["t", "randomization", "bootstrap", "wilcoxon", "sign", "tukey", "rtukey"]
TESTS: tuple[str, ...] = ("t", "randomization", "bootstrap", "wilcoxon", "sign", "tukey", "rtukey")
Family = Literal["measure", "all"]
MeanInterval = Literal["t", "bootstrap"]

TEST_NAMES = {
    "t": "paired t-test",
    "randomization": "randomization test (sign flips)",
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
#: Fewer queries than this draw a warning: no test is reliable on so few.
MIN_RELIABLE_QUERIES = 5
#: A system lacking more than this share of the queries draws a warning.
FILLED_WARNING_SHARE = 0.1

_RANDOM_TESTS = frozenset({"randomization", "bootstrap", "rtukey"})


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
    """All systems on one measure: rows in system order, the ANOVA, and every pair of systems
    (Tukey tests, or ``all_pairs=True``; None otherwise). ``constant`` is True when every
    system scores the same value on every query."""

    measure: str
    rows: tuple[SystemRow, ...]
    anova: Anova
    pairs: Pairwise | None
    constant: bool

    def row(self, system: str) -> SystemRow:
        for r in self.rows:
            if r.system == system:
                return r
        raise InputError(f"no system named {system!r}", value=[r.system for r in self.rows])


@dataclass(frozen=True, slots=True)
class Comparison:
    """The result of :func:`compare`.

    - ``test``, ``correction`` (as applied: ``tukey`` for the Tukey tests), ``family`` (which
      p-values were corrected together, in words) and ``family_size``.
    - ``alpha`` and ``level`` (of every interval, ``1 - alpha`` by default), ``seed`` and
      ``resamples`` (None when the test draws nothing).
    - ``queries`` (n, the same for every comparison), ``query_set``, and per system
      ``filled`` (queries it lacked, scored 0) and ``dropped`` (its queries outside the set).
    - ``effect_size``: how effect sizes are defined (``mean(d)/sd(d)``, d the per-query
      differences, or ``delta/sqrt(V_E)``, V_E the residual variance of the two-way ANOVA);
      ``delta_interval`` and ``mean_interval``: how the intervals are computed.
    - ``warnings``: what deserves caution (few queries, zero variance, constant measures).
    """

    systems: tuple[str, ...]
    baseline: str
    measures: tuple[MeasureComparison, ...]
    test: str
    correction: str
    family: str
    family_size: int
    alpha: float
    level: float
    seed: int
    resamples: int | None
    queries: int
    query_set: str
    filled: tuple[int, ...]
    dropped: tuple[int, ...]
    effect_size: str
    delta_interval: str
    mean_interval: str
    exact: bool
    warnings: tuple[str, ...]

    def measure(self, name: str) -> MeasureComparison:
        for m in self.measures:
            if m.measure == name:
                return m
        raise InputError(
            f"measure {name!r} was not compared", value=[m.measure for m in self.measures]
        )

    def row(self, measure: str, system: str) -> SystemRow:
        return self.measure(measure).row(system)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (strict JSON: a non-finite number becomes ``null``)."""
        return {
            "test": self.test,
            "test_name": TEST_NAMES[self.test],
            "correction": self.correction,
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
            "warnings": list(self.warnings),
            "measures": [_measure_dict(m, self.systems) for m in self.measures],
        }


def _num(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return float(value)


def _interval_dict(interval: Interval | None) -> dict[str, Any] | None:
    if interval is None:
        return None
    return {
        "low": _num(interval.low),
        "high": _num(interval.high),
        "level": interval.level,
        "method": interval.method,
    }


def _measure_dict(m: MeasureComparison, systems: tuple[str, ...]) -> dict[str, Any]:
    a = m.anova
    return {
        "measure": m.measure,
        "constant": m.constant,
        "anova": {
            "f": _num(a.f),
            "p_value": a.p_value,
            "df_systems": a.df_systems,
            "df_residual": a.df_residual,
            "ss_systems": a.ss_systems,
            "ss_queries": a.ss_queries,
            "ss_residual": a.ss_residual,
            "ms_residual": a.ms_residual,
        },
        "rows": [
            {
                "system": r.system,
                "is_baseline": r.is_baseline,
                "mean": r.mean,
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
                    "sd_difference": r.plan.sd_difference,
                    "delta": r.plan.delta,
                    "power": r.plan.power,
                    "alpha": r.plan.alpha,
                    "queries_needed": r.plan.queries_needed,
                    "min_detectable_delta": r.plan.min_detectable_delta,
                },
            }
            for r in m.rows
        ],
        "pairs": None
        if m.pairs is None
        else [
            {
                "first": systems[p.first],
                "second": systems[p.second],
                "delta": p.delta,
                "interval": _interval_dict(p.interval),
                "effect_size": _num(p.effect_size),
                "statistic": _num(p.statistic),
                "p_value": p.p_value,
                "p_adjusted": p.p_adjusted,
            }
            for p in m.pairs.pairs
        ],
    }


# ---------------------------------------------------------------------------- pairwise
def pairwise(
    scores: Any,
    *,
    test: Test = "randomization",
    correction: Correction = "holm",
    resamples: int = 10_000,
    seed: int = 0,
    level: float = 0.95,
    exact: bool | None = None,
    zero_method: ZeroMethod = "wilcox",
) -> Pairwise:
    """Every pair of systems of ``scores`` (systems × queries) by ``test``.

    Paired tests are corrected with ``correction`` over all ``m(m-1)/2`` pairs; the Tukey tests
    are family-wise over all pairs already (``correction`` is not applied; the result says
    ``tukey``). The randomization and bootstrap tests vectorise over pairs and share their draws.
    """
    _check_test(test)
    _check_correction(correction)
    x = as_matrix(scores)
    if x.shape[0] < 2:
        raise InputError("comparing systems needs at least two systems", value=x.shape[0])
    if test == "tukey":
        return tukey_hsd(x, level=level)
    if test == "rtukey":
        return randomized_tukey_hsd(x, resamples=resamples, seed=seed, level=level)
    m, n = x.shape
    first, second = np.triu_indices(m, 1)
    tests = _paired_tests(x[first].T, x[second].T, test, resamples, seed, level, exact, zero_method)
    pairs = tuple(
        PairResult(
            int(i),
            int(j),
            t.delta,
            t.statistic,
            t.p_value,
            t.p_value,
            t.effect_size,
            t.interval,
        )
        for i, j, t in zip(first.tolist(), second.tolist(), tests, strict=True)
    )
    drawn = resamples if test in _RANDOM_TESTS and not (tests and tests[0].exact) else None
    return correct_pairwise(Pairwise(test, m, n, "none", pairs, drawn), correction)


def _paired_tests(
    a: NDArray[np.float64],
    b: NDArray[np.float64],
    test: str,
    resamples: int,
    seed: int,
    level: float,
    exact: bool | None,
    zero_method: ZeroMethod,
) -> list[PairedTest]:
    """One paired test of each column of ``a`` against the same column of ``b`` (queries ×
    pairs); ``d = a - b``."""
    k = a.shape[1]
    if test == "t":
        return [paired_t(a[:, j], b[:, j], level=level) for j in range(k)]
    if test == "wilcoxon":
        return [
            wilcoxon_test(a[:, j], b[:, j], zero_method=zero_method, level=level) for j in range(k)
        ]
    if test == "sign":
        return [sign_test(a[:, j], b[:, j], level=level) for j in range(k)]
    d, tolerances = clean_differences(a, b)
    if test == "randomization":
        p, exact_used = randomization_pvalues(
            d, tolerances=tolerances, resamples=resamples, seed=seed, exact=exact
        )
        return [
            from_differences(
                "randomization",
                d[:, j],
                float(tolerances[j]),
                sum_difference(d[:, j], float(tolerances[j])),
                float(p[j]),
                difference_interval(d[:, j], float(tolerances[j]), level),
                None if exact_used else resamples,
                exact_used,
            )
            for j in range(k)
        ]
    if test == "bootstrap":
        p, intervals = bootstrap_pvalues(
            d, tolerances=tolerances, resamples=resamples, seed=seed, level=level
        )
        return [
            from_differences(
                "bootstrap",
                d[:, j],
                float(tolerances[j]),
                t_statistic(d[:, j], float(tolerances[j])),
                float(p[j]),
                intervals[j],
                resamples,
            )
            for j in range(k)
        ]
    raise InputError("unknown test", value=test, hint=_TEST_HINT)  # pragma: no cover


_TEST_HINT = "use " + ", ".join(TESTS)


def _check_test(test: str) -> None:
    if test not in TESTS:
        raise InputError("unknown test", value=test, hint=_TEST_HINT)


def _check_correction(correction: str) -> None:
    if correction not in CORRECTIONS:
        raise InputError(
            "unknown correction", value=correction, hint="use holm, bonferroni, bh or none"
        )


# ---------------------------------------------------------------------------- compare
def compare(
    scores: ScoreMatrix,
    *,
    baseline: str | None = None,
    test: Test = "t",
    correction: Correction = "holm",
    family: Family = "measure",
    alpha: float = 0.05,
    level: float | None = None,
    seed: int = 0,
    resamples: int = 10_000,
    exact: bool | None = None,
    mean_interval: MeanInterval = "t",
    zero_method: ZeroMethod = "wilcox",
    all_pairs: bool = False,
    power: float = 0.8,
    delta: float | None = None,
) -> Comparison:
    """Compare every system of ``scores`` with ``baseline`` (default: the first system).

    - ``test``: ``t`` (paired t), ``randomization`` (sign flips: exact for n <= 30, else
      ``resamples`` seeded draws), ``bootstrap`` (studentized, with a BCa interval),
      ``wilcoxon``, ``sign``, ``tukey`` (Tukey HSD with queries as blocks), ``rtukey``
      (randomised Tukey HSD, ``resamples`` draws).
    - ``correction`` of the baseline comparisons: ``holm`` (default), ``bonferroni``, ``bh``
      or ``none``, over the ``family``: ``measure`` (the m - 1 comparisons of each measure) or
      ``all`` (every system × measure). The Tukey tests control the error over all pairs of
      systems of each measure themselves; ``correction`` is then not applied.
    - ``alpha``: significance level; intervals are at ``level`` (default ``1 - alpha``).
    - ``mean_interval``: interval of each system's mean, ``t`` or ``bootstrap`` (BCa).
    - ``all_pairs``: also test every pair of systems (always done for the Tukey tests).
    - ``power``, ``delta``: planning figures per system (queries needed to detect ``delta``,
      default the observed difference; smallest detectable difference with n queries).

    Emits :class:`~rankscope.stats.StatsWarning` (and lists it in ``warnings``) for fewer than 5
    queries, a constant measure, zero-variance differences, or a system lacking many queries.
    Raises :class:`~rankscope.errors.InputError` for fewer than two systems or queries, an
    unknown baseline, test or correction, and systems that share no observed query.
    """
    _check_test(test)
    _check_correction(correction)
    if family not in ("measure", "all"):
        raise InputError("unknown family", value=family, hint="use measure or all")
    if mean_interval not in ("t", "bootstrap"):
        raise InputError("unknown mean interval", value=mean_interval, hint="use t or bootstrap")
    alpha = check_alpha(alpha)
    level = check_level(1.0 - alpha if level is None else level)
    if test in _RANDOM_TESTS or mean_interval == "bootstrap":
        resamples = check_resamples(resamples)
    systems = scores.systems
    if len(systems) < 2:
        raise InputError(
            "a comparison needs at least two systems",
            value=list(systems),
            hint="give two or more runs",
        )
    if not scores.measures:
        raise InputError("no measures to compare")
    base = systems[0] if baseline is None else baseline
    if base not in systems:
        raise InputError(
            f"the baseline {base!r} is not one of the systems",
            hint=f"name one of {', '.join(systems)}",
        )
    b = systems.index(base)
    n = scores.n
    if n < 2:
        raise InputError(
            "a comparison needs at least 2 queries",
            value=n,
            hint="evaluate on more queries (with fewer than 5 no test is reliable)",
        )
    if test == "bootstrap":
        check_bootstrap_queries(n)
    notes: list[str] = []
    _check_overlap(scores, notes)
    if n < MIN_RELIABLE_QUERIES:
        notes.append(
            f"only {n} queries: no significance test is reliable on fewer than "
            f"{MIN_RELIABLE_QUERIES}"
        )

    others = [s for s in range(len(systems)) if s != b]
    measures: list[MeasureComparison] = []
    tests_by_measure: list[list[PairedTest | PairResult]] = []
    cleaned: list[NDArray[np.float64]] = []  # per measure: queries × other systems
    for k, name in enumerate(scores.measures):
        x = scores.values[k]
        # equal up to rounding (100 eps of the scores' size) is constant
        constant = bool(np.ptp(x) <= TOLERANCE * np.abs(x).max())
        if constant:
            notes.append(
                f"{name}: every system scores {x.flat[0]:.4g} on every query; nothing to "
                "compare (every p = 1)"
            )
        means = x.mean(axis=1)
        mean_intervals = (
            [t_interval(x[s], level) for s in range(len(systems))]
            if mean_interval == "t"
            else bootstrap_intervals(x.T.copy(), level, resamples=resamples, seed=seed)
        )
        a_cols = x[others].T  # queries × other systems
        b_cols = np.repeat(x[b][:, None], len(others), axis=1)
        d, tolerances = clean_differences(a_cols, b_cols)
        for j, s in enumerate(others):
            column = d[:, j]
            if sd(column) == 0.0 and mean_difference(column, float(tolerances[j])) != 0.0:
                notes.append(
                    f"{name}: {systems[s]} - {base} is {column[0]:+.4g} on every query (zero "
                    "variance): its t statistic and effect size are infinite"
                )
        pairs: Pairwise | None = None
        if test in ("tukey", "rtukey"):
            pairs = pairwise(x, test=test, resamples=resamples, seed=seed, level=level)
            found: list[PairedTest | PairResult] = [pairs.pair(s, b) for s in others]
        else:
            found = list(
                _paired_tests(a_cols, b_cols, test, resamples, seed, level, exact, zero_method)
            )
            if all_pairs:
                pairs = pairwise(
                    x,
                    test=test,
                    correction=correction,
                    resamples=resamples,
                    seed=seed,
                    level=level,
                    exact=exact,
                    zero_method=zero_method,
                )
        tests_by_measure.append(found)
        rows = [
            SystemRow(name, systems[s], s == b, float(means[s]), mean_intervals[s])
            for s in range(len(systems))
        ]
        measures.append(MeasureComparison(name, tuple(rows), anova_two_way(x), pairs, constant))
        cleaned.append(d)

    applied, family_text, family_size, adjusted = _correct(
        tests_by_measure, test, correction, family, len(others), len(scores.measures), base
    )
    out_measures = []
    for k, mc in enumerate(measures):
        rows = list(mc.rows)
        for j, s in enumerate(others):
            t = tests_by_measure[k][j]
            diffs = cleaned[k][:, j]  # ties and zeros up to rounding, as every test sees them
            p_adj = adjusted[k][j]
            significant = p_adj <= alpha and t.delta != 0.0
            direction: Literal["better", "worse"] | None = None
            if significant:
                direction = "better" if t.delta > 0 else "worse"
            wins = int(np.count_nonzero(diffs > 0))
            ties = int(np.count_nonzero(diffs == 0))
            rows[s] = SystemRow(
                measure=mc.measure,
                system=systems[s],
                is_baseline=False,
                mean=rows[s].mean,
                mean_interval=rows[s].mean_interval,
                delta=t.delta,
                delta_interval=t.interval,
                effect_size=t.effect_size,
                statistic=t.statistic,
                p_value=t.p_value,
                p_adjusted=p_adj,
                wins=wins,
                ties=ties,
                losses=n - wins - ties,
                significant=significant,
                direction=direction,
                plan=power_plan(
                    diffs,
                    delta=abs(t.delta) if delta is None else delta,
                    alpha=alpha,
                    power=power,
                ),
            )
        out_measures.append(
            MeasureComparison(mc.measure, tuple(rows), mc.anova, mc.pairs, mc.constant)
        )

    _warn_filled(scores, notes)
    for note in notes:
        warnings.warn(note, StatsWarning, stacklevel=2)
    exact_used = test in ("randomization",) and all(
        isinstance(t, PairedTest) and t.exact for found in tests_by_measure for t in found
    )
    draws = resamples if test in _RANDOM_TESTS and not exact_used else None
    if mean_interval == "bootstrap":
        draws = resamples
    return Comparison(
        systems=systems,
        baseline=base,
        measures=tuple(out_measures),
        test=test,
        correction=applied,
        family=family_text,
        family_size=family_size,
        alpha=alpha,
        level=level,
        seed=seed,
        resamples=draws,
        queries=n,
        query_set=scores.query_set,
        filled=scores.filled,
        dropped=scores.dropped,
        effect_size=("delta/sqrt(V_E)" if test in ("tukey", "rtukey") else "mean(d)/sd(d)"),
        delta_interval=_delta_interval_text(test),
        mean_interval="t" if mean_interval == "t" else "bootstrap (BCa)",
        exact=exact_used,
        warnings=tuple(notes),
    )


def _delta_interval_text(test: str) -> str:
    if test == "tukey":
        return "Tukey, simultaneous over all pairs"
    if test == "rtukey":
        return "randomised Tukey, simultaneous over all pairs"
    if test == "bootstrap":
        return "bootstrap BCa"
    return "paired t"


def _correct(
    found: list[list[PairedTest | PairResult]],
    test: str,
    correction: str,
    family: str,
    per_measure: int,
    measures: int,
    base: str,
) -> tuple[str, str, int, list[list[float]]]:
    """Corrected p-values of the baseline comparisons, and the family in words."""
    if test in ("tukey", "rtukey"):
        systems = per_measure + 1
        size = systems * (systems - 1) // 2
        text = f"all {size} pairs of systems within each measure"
        return "tukey", text, size, [[t.p_value for t in row] for row in found]
    if family == "all":
        flat = [t.p_value for row in found for t in row]
        adjusted = adjust_pvalues(flat, correction)  # type: ignore[arg-type]
        out, i = [], 0
        for row in found:
            out.append(adjusted[i : i + len(row)].tolist())
            i += len(row)
        size = len(flat)
        text = f"{size} comparisons with {base} ({per_measure} systems × {measures} measures)"
        return correction, text, size, out
    out = [adjust_pvalues([t.p_value for t in row], correction).tolist() for row in found]  # type: ignore[arg-type]
    text = f"{per_measure} comparison{'s' if per_measure != 1 else ''} with {base} per measure"
    return correction, text, per_measure, out


def _check_overlap(scores: ScoreMatrix, notes: list[str]) -> None:
    """Refuse systems that share no observed query; note systems that observed none."""
    observed = scores.observed
    for s, name in enumerate(scores.systems):
        if not observed[s].any():
            raise InputError(
                f"{name} has no query in common with the {scores.query_set} query set; "
                "every one of its scores would be a filled 0",
                hint="check that the run and the qrels use the same query ids",
            )
    shared = observed.all(axis=0)
    if not shared.any():
        raise InputError(
            "the systems were run on disjoint query sets: no query is answered by all of "
            f"{', '.join(scores.systems)}",
            hint="compare runs over the same queries",
        )


def _warn_filled(scores: ScoreMatrix, notes: list[str]) -> None:
    for name, filled in zip(scores.systems, scores.filled, strict=True):
        if filled > FILLED_WARNING_SHARE * scores.n:
            notes.append(
                f"{name} lacks {filled} of the {scores.n} queries; they score 0 in every comparison"
            )


__all__ = [
    "TESTS",
    "Comparison",
    "Family",
    "MeanInterval",
    "MeasureComparison",
    "SystemRow",
    "Test",
    "compare",
    "pairwise",
]
