"""Compare systems on one query set: the entry point tables, benchmarks and services call.

:func:`compare` takes a :class:`~rankscope.stats.matrix.ScoreMatrix` and returns a
:class:`Comparison`: for each measure and system, the mean with its interval and, against the
baseline, the difference with its interval, effect size, p-value (corrected over a stated family),
wins/ties/losses, a significance mark, and planning figures; plus the two-way ANOVA of each
measure and, for the Tukey tests (or ``all_pairs=True``), every pair of systems.
:func:`pairwise` tests every pair of systems of one matrix. Reading qrels and run files first is
:func:`rankscope.compare_io.compare_runs`.
"""

from __future__ import annotations

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
from rankscope.stats.comparison import (
    Comparison,
    Family,
    MeanInterval,
    MeasureComparison,
    SystemRow,
)
from rankscope.stats.intervals import bootstrap_intervals, check_level, t_interval
from rankscope.stats.matrix import ScoreMatrix
from rankscope.stats.multiple import (
    CORRECTIONS,
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
from rankscope.stats.planning import power_plan

Test = Literal["t", "randomization", "bootstrap", "wilcoxon", "sign", "tukey", "rtukey"]
#: the paired tests ``compare`` takes (``test=``; ``rankscope compare --test``)
TESTS: tuple[str, ...] = ("t", "randomization", "bootstrap", "wilcoxon", "sign", "tukey", "rtukey")

#: Fewer queries than this draw a warning: no test is reliable on so few.
MIN_RELIABLE_QUERIES = 5
#: A system lacking more than this share of the queries draws a warning.
FILLED_WARNING_SHARE = 0.1

_RANDOM_TESTS = frozenset({"randomization", "bootstrap", "rtukey"})


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

    A quantity where lower is better (``Quantity.higher_is_better`` False, such as latency)
    turns the sense round: a significantly lower value is ``"better"``, and a query where the
    system is lower than the baseline is a win.

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
    options = _Options(
        test, correction, family, alpha, level, seed, resamples, exact, mean_interval,
        zero_method, all_pairs, power, delta,
    )  # fmt: skip
    b = _baseline_index(scores, baseline, options.test)
    notes = _query_notes(scores)
    found = [_measure(scores, k, b, options, notes) for k in range(len(scores.quantities))]
    applied, family_size, adjusted = _correct([f.tests for f in found], options)
    measures = tuple(
        _against_baseline(f, p, scores, b, options) for f, p in zip(found, adjusted, strict=True)
    )
    _warn_filled(scores, notes)
    for note in notes:
        warnings.warn(note, StatsWarning, stacklevel=2)
    exact_used = options.test == "randomization" and all(
        isinstance(t, PairedTest) and t.exact for f in found for t in f.tests
    )
    draws = options.resamples if options.test in _RANDOM_TESTS and not exact_used else None
    if options.mean_interval == "bootstrap":
        draws = options.resamples
    return Comparison(
        systems=scores.systems,
        baseline=scores.systems[b],
        measures=measures,
        test=options.test,
        correction=applied,
        scope=options.family,
        family_size=family_size,
        alpha=options.alpha,
        level=options.level,
        seed=options.seed,
        resamples=draws,
        queries=scores.n,
        query_set=scores.query_set,
        filled=scores.filled,
        dropped=scores.dropped,
        mean_method=options.mean_interval,
        exact=exact_used,
        warnings=tuple(notes),
    )


@dataclass(frozen=True, slots=True)
class _Options:
    """:func:`compare`'s settings, checked (``level`` resolved)."""

    test: Test
    correction: Correction
    family: Family
    alpha: float
    level: float
    seed: int
    resamples: int
    exact: bool | None
    mean_interval: MeanInterval
    zero_method: ZeroMethod
    all_pairs: bool
    power: float
    delta: float | None


def _baseline_index(scores: ScoreMatrix, baseline: str | None, test: str) -> int:
    """The baseline's row, after checking that there is something to compare."""
    systems = scores.systems
    if len(systems) < 2:
        raise InputError(
            "a comparison needs at least two systems",
            value=list(systems),
            hint="give two or more runs",
        )
    if not scores.quantities:
        raise InputError("no measures to compare")
    base = systems[0] if baseline is None else baseline
    if base not in systems:
        raise InputError(
            f"the baseline {base!r} is not one of the systems",
            hint=f"name one of {', '.join(systems)}",
        )
    if scores.n < 2:
        raise InputError(
            "a comparison needs at least 2 queries",
            value=scores.n,
            hint="evaluate on more queries (with fewer than 5 no test is reliable)",
        )
    if test == "bootstrap":
        check_bootstrap_queries(scores.n)
    return systems.index(base)


def _query_notes(scores: ScoreMatrix) -> list[str]:
    """Refuse systems that share no observed query; note too few queries."""
    _check_overlap(scores)
    n = scores.n
    if n < MIN_RELIABLE_QUERIES:
        return [
            f"only {n} queries: no significance test is reliable on fewer than "
            f"{MIN_RELIABLE_QUERIES}"
        ]
    return []


@dataclass(frozen=True, slots=True)
class _Measure:
    """One measure before correction: rows with the means, the tests of the other systems
    against the baseline, and their per-query differences (queries × other systems; ties and
    zeros up to rounding, as every test sees them)."""

    comparison: MeasureComparison
    tests: list[PairedTest | PairResult]
    differences: NDArray[np.float64]


def _measure(scores: ScoreMatrix, k: int, b: int, options: _Options, notes: list[str]) -> _Measure:
    """Means, intervals, ANOVA, pairs and the baseline tests of measure ``k``."""
    systems, name, x = scores.systems, scores.quantities[k].name, scores.values[k]
    o = options
    # equal up to rounding (100 eps of the scores' size) is constant
    constant = bool(np.ptp(x) <= TOLERANCE * np.abs(x).max())
    if constant:
        notes.append(
            f"{name}: every system scores {x.flat[0]:.4g} on every query; nothing to "
            "compare (every p = 1)"
        )
    means = x.mean(axis=1)
    bounds = scores.quantities[k].bounds
    mean_intervals = (
        [t_interval(x[s], o.level, bounds=bounds) for s in range(len(systems))]
        if o.mean_interval == "t"
        else bootstrap_intervals(x.T.copy(), o.level, resamples=o.resamples, seed=o.seed)
    )
    clipped = [systems[s] for s, i in enumerate(mean_intervals) if i.clipped]
    if clipped and bounds is not None:
        notes.append(
            f"{name}: the t interval of the mean of {', '.join(clipped)} reached past the "
            f"measure's range [{bounds[0]:g}, {bounds[1]:g}] and is clipped to it"
        )
    others = [s for s in range(len(systems)) if s != b]
    a_cols = x[others].T  # queries × other systems
    b_cols = np.repeat(x[b][:, None], len(others), axis=1)
    d, tolerances = clean_differences(a_cols, b_cols)
    for j, s in enumerate(others):
        column = d[:, j]
        if sd(column) == 0.0 and mean_difference(column, float(tolerances[j])) != 0.0:
            notes.append(
                f"{name}: {systems[s]} - {systems[b]} is {column[0]:+.4g} on every query (zero "
                "variance): its t statistic and effect size are infinite"
            )
    pairs: Pairwise | None = None
    if o.test in ("tukey", "rtukey"):
        pairs = pairwise(x, test=o.test, resamples=o.resamples, seed=o.seed, level=o.level)
        found: list[PairedTest | PairResult] = [pairs.pair(s, b) for s in others]
    else:
        found = list(
            _paired_tests(
                a_cols, b_cols, o.test, o.resamples, o.seed, o.level, o.exact, o.zero_method
            )
        )
        if o.all_pairs:
            pairs = pairwise(
                x,
                test=o.test,
                correction=o.correction,
                resamples=o.resamples,
                seed=o.seed,
                level=o.level,
                exact=o.exact,
                zero_method=o.zero_method,
            )
    rows = tuple(
        SystemRow(name, systems[s], s == b, float(means[s]), mean_intervals[s])
        for s in range(len(systems))
    )
    measure = MeasureComparison(scores.quantities[k], rows, anova_two_way(x), pairs, constant)
    return _Measure(measure, found, d)


def _against_baseline(
    found: _Measure, adjusted: list[float], scores: ScoreMatrix, b: int, options: _Options
) -> MeasureComparison:
    """The measure's rows with each system's comparison with the baseline filled in: the
    test's difference, interval and p, the corrected p, the direction in the quantity's sense,
    wins/ties/losses and the planning figures."""
    mc = found.comparison
    higher = mc.quantity.higher_is_better
    n = scores.n
    rows = list(mc.rows)
    others = [s for s in range(len(scores.systems)) if s != b]
    for j, s in enumerate(others):
        t = found.tests[j]
        diffs = found.differences[:, j]
        p_adj = adjusted[j]
        significant = p_adj <= options.alpha and t.delta != 0.0
        direction: Literal["better", "worse"] | None = None
        if significant:
            direction = "better" if (t.delta > 0) == higher else "worse"
        wins = int(np.count_nonzero(diffs > 0 if higher else diffs < 0))
        ties = int(np.count_nonzero(diffs == 0))
        rows[s] = SystemRow(
            measure=mc.measure,
            system=scores.systems[s],
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
                delta=abs(t.delta) if options.delta is None else options.delta,
                alpha=options.alpha,
                power=options.power,
            ),
        )
    return MeasureComparison(mc.quantity, tuple(rows), mc.anova, mc.pairs, mc.constant)


def _correct(
    found: list[list[PairedTest | PairResult]], options: _Options
) -> tuple[str, int, list[list[float]]]:
    """The correction as applied, the family's size and the corrected p-values of the
    baseline comparisons (one list per measure)."""
    if options.test in ("tukey", "rtukey"):
        systems = len(found[0]) + 1
        return "tukey", systems * (systems - 1) // 2, [[t.p_value for t in row] for row in found]
    if options.family == "all":
        flat = [t.p_value for row in found for t in row]
        adjusted = adjust_pvalues(flat, options.correction)
        out, i = [], 0
        for row in found:
            out.append(adjusted[i : i + len(row)].tolist())
            i += len(row)
        return options.correction, len(flat), out
    rows = [adjust_pvalues([t.p_value for t in row], options.correction).tolist() for row in found]
    return options.correction, len(found[0]), rows


def _check_overlap(scores: ScoreMatrix) -> None:
    """Refuse a system that observed no query, and systems that share no observed query."""
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
    "Test",
    "compare",
    "pairwise",
]
