"""The regression gate's decision: per measure, is the candidate non-inferior to the baseline?

A measure **fails** when the one-sided ``1 - alpha`` lower bound of ``Δ = candidate - baseline``
(paired t, :func:`rankscope.stats.non_inferiority`) is below ``-margin``, or when the
candidate's mean is below the measure's absolute floor. The check passes when no measure
fails. Each measure is its own gate at ``alpha``: passing needs every one to pass, so no
correction for the number of measures is needed (an intersection-union test).

Three sources, one decision (:func:`check_runs`, :func:`check_benchmark`, :func:`check_suite`):
two run files against qrels, scored on every qrels query (a query a run lacks scores 0 and is
counted); two configurations of a benchmark's output folder, over one view's queries; or a
suite file's ``check:`` section and the benchmark's output folder. The queries that moved most
against the candidate come from ``rankscope diff`` (:mod:`rankscope.diff`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from rankscope.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.diff import RunDiff
    from rankscope.stats import NonInferiority, ScoreMatrix

#: defaults of the gate (``rankscope check``, the suite's ``check:``, the pytest helper)
MARGIN = 0.01
ALPHA = 0.05
WORST = 5


@dataclass(frozen=True, slots=True)
class MeasureCheck:
    """One measure's decision: the two means, the non-inferiority test, the floor (if any)."""

    measure: str
    baseline: float
    candidate: float
    test: NonInferiority
    floor: float | None = None

    @property
    def regression(self) -> bool:
        """The candidate may be worse than the baseline by more than the margin."""
        return self.test.inferior

    @property
    def below_floor(self) -> bool:
        """Below the floor beyond rounding (a mean of sixty 0.4s sums to 0.39999999999999986:
        not below a floor of 0.4)."""
        from rankscope.stats import equal_up_to_rounding

        return (
            self.floor is not None
            and self.candidate < self.floor
            and not equal_up_to_rounding(self.candidate, self.floor)
        )

    @property
    def passed(self) -> bool:
        return not (self.regression or self.below_floor)

    @property
    def verdict(self) -> Literal["pass", "regression", "below floor", "regression, below floor"]:
        if self.regression and self.below_floor:
            return "regression, below floor"
        if self.regression:
            return "regression"
        return "below floor" if self.below_floor else "pass"


@dataclass(frozen=True, slots=True)
class MovedQuery:
    """A query the candidate lost most on (the first measure), from ``rankscope diff``."""

    query_id: str
    baseline: float
    candidate: float
    delta: float
    text: str = ""


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The gate's decision over ``num_queries`` queries (``query_set`` says which)."""

    baseline: str
    candidate: str
    query_set: str
    num_queries: int
    margin: float
    alpha: float
    measures: tuple[MeasureCheck, ...]
    worst: tuple[MovedQuery, ...] = ()
    worst_measure: str = ""
    notes: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return all(m.passed for m in self.measures)

    @property
    def exit_code(self) -> int:
        """0 pass, 1 regression (a usage or input error is a RankscopeError: 2)."""
        return 0 if self.passed else 1


def parse_floors(items: Sequence[str]) -> dict[str, float]:
    """``["ndcg@10=0.6", ...]`` (``--min``) as ``{measure: floor}``."""
    floors: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            floor = float(value)
        except ValueError:
            floor = math.nan
        if not sep or not name.strip() or not math.isfinite(floor):
            raise InputError("a floor is MEASURE=VALUE", value=item, hint="e.g. --min ndcg@10=0.6")
        floors[_canonical(name.strip())] = floor
    return floors


def _canonical(name: str) -> str:
    from rankscope.metrics.names import parse_measure

    return str(parse_measure(name))


def _floors(floors: Mapping[str, float] | None) -> dict[str, float]:
    """Floors by canonical measure name, each a finite number."""
    out: dict[str, float] = {}
    for name, value in (floors or {}).items():
        if not (isinstance(value, int | float) and math.isfinite(value)):
            raise InputError(f"the floor of {name} must be a finite number", value=value)
        out[_canonical(name)] = float(value)
    return out


def _measures(measures: Sequence[str], floors: Mapping[str, float]) -> list[str]:
    """The measures checked: those named, then any floor's measure not among them (canonical
    names, each once)."""
    wanted = [_canonical(m) for m in measures]
    if not wanted and not floors:
        raise InputError("no measure to check", hint="name one with -m, e.g. -m ndcg@10")
    return list(dict.fromkeys([*wanted, *floors]))


def _decide(
    scores: ScoreMatrix,
    baseline: str,
    candidate: str,
    measures: Sequence[str],
    *,
    margin: float,
    alpha: float,
    floors: Mapping[str, float],
) -> tuple[MeasureCheck, ...]:
    from rankscope.stats import non_inferiority

    b, c = scores.systems.index(baseline), scores.systems.index(candidate)
    checks = []
    for name in measures:
        k = scores.measures.index(name)
        base, cand = scores.values[k, b], scores.values[k, c]
        checks.append(
            MeasureCheck(
                measure=name,
                baseline=float(base.mean()),
                candidate=float(cand.mean()),
                test=non_inferiority(cand, base, margin=margin, alpha=alpha),
                floor=floors.get(name),
            )
        )
    return tuple(checks)


def _worst(diff: RunDiff, limit: int) -> tuple[MovedQuery, ...]:
    losses = sorted(
        (q for q in diff.queries if q.outcome == "loss"), key=lambda q: (q.delta, q.query_id)
    )
    return tuple(
        MovedQuery(q.query_id, q.a.value, q.b.value, q.delta, q.query) for q in losses[:limit]
    )


def check_runs(
    qrels: Any,
    baseline: Any,
    candidate: Any,
    measures: Sequence[str] = ("ndcg@10",),
    *,
    margin: float = MARGIN,
    alpha: float = ALPHA,
    floors: Mapping[str, float] | None = None,
    depth: int | None = None,
    rel_level: int = 1,
    worst: int = WORST,
) -> CheckResult:
    """Check ``candidate`` against ``baseline`` (runs: files or values) on every query of
    ``qrels`` (a file or value), per measure of ``measures`` and of ``floors``."""
    from rankscope.compare_io import load_scores
    from rankscope.data import Qrels, Run, read_qrels, read_run, unique_run_names
    from rankscope.diff import diff_runs

    floors = _floors(floors)
    wanted = _measures(measures, floors)
    the_qrels = qrels if isinstance(qrels, Qrels) else read_qrels(qrels)
    runs = unique_run_names(
        [r if isinstance(r, Run) else read_run(r) for r in (baseline, candidate)]
    )
    scores = load_scores(the_qrels, runs, wanted, depth=depth, rel_level=rel_level)
    names = scores.systems
    n = len(scores.query_ids)
    missing = [int((~scores.observed[i]).sum()) for i in range(2)]
    query_set = f"the {n} queries of the qrels"
    if any(missing):
        query_set += (
            f" (missing from the baseline: {missing[0]}, from the candidate: {missing[1]}; "
            "scored 0)"
        )
    checks = _decide(scores, names[0], names[1], wanted, margin=margin, alpha=alpha, floors=floors)
    moved = diff_runs(the_qrels, runs[0], runs[1], wanted[0], rel_level=rel_level)
    return CheckResult(
        baseline=names[0],
        candidate=names[1],
        query_set=query_set,
        num_queries=n,
        margin=float(margin),
        alpha=float(alpha),
        measures=checks,
        worst=_worst(moved, worst),
        worst_measure=wanted[0],
    )


def check_benchmark(
    source: str | os.PathLike[str],
    baseline: str,
    candidate: str,
    measures: Sequence[str] = (),
    *,
    margin: float = MARGIN,
    alpha: float = ALPHA,
    floors: Mapping[str, float] | None = None,
    view: Literal["answered", "all"] | None = None,
    worst: int = WORST,
) -> CheckResult:
    """Check configuration ``candidate`` against ``baseline`` of the benchmark in ``source``
    (its output folder or results.json) over a view's queries (default: those every
    configuration answered), on ``measures`` (default: the headline)."""
    from rankscope.bench.statistics import score_matrix
    from rankscope.diff import diff_configurations
    from rankscope.diff.bench import BenchFolder

    bench = BenchFolder.open(source)
    result = bench.result
    floors = _floors(floors)
    wanted = _measures(measures or ([] if floors else [result.headline]), floors)
    chosen = bench.view_name(view)
    ok = [c.name for c in result.successful]
    for role, name in (("baseline", baseline), ("candidate", candidate)):
        if name not in ok:
            raise InputError(
                f"the {role} {name!r} is not a configuration of this benchmark that ran",
                path=bench.folder / "results.json",
                hint=f"name one of {', '.join(ok) or '(none)'}",
            )
    if baseline == candidate:
        raise InputError(
            "the baseline and the candidate are the same configuration", value=baseline
        )
    scores = score_matrix(result, wanted, chosen)
    checks = _decide(scores, baseline, candidate, wanted, margin=margin, alpha=alpha, floors=floors)
    moved = diff_configurations(bench, baseline, [candidate], wanted[0], view=chosen, texts=False)
    return CheckResult(
        baseline=baseline,
        candidate=candidate,
        query_set=scores.query_set,
        num_queries=len(scores.query_ids),
        margin=float(margin),
        alpha=float(alpha),
        measures=checks,
        worst=_worst(moved[0], worst),
        worst_measure=wanted[0],
        notes=tuple(bench.notes),
    )


def check(
    source: str | os.PathLike[str],
    baseline: str | None = None,
    candidate: str | None = None,
    measures: Sequence[str] = (),
    *,
    margin: float | None = None,
    alpha: float | None = None,
    floors: Mapping[str, float] | None = None,
    view: Literal["answered", "all"] | None = None,
    out: str | os.PathLike[str] | None = None,
    rel_level: int = 1,
) -> CheckResult:
    """``rankscope check``'s one call: a suite file alone (:func:`check_suite`, ``out`` its
    benchmark's folder; the other arguments, when given, replace its ``check:`` values), a
    benchmark's output folder or results.json and two configurations (:func:`check_benchmark`),
    or qrels and two run files (:func:`check_runs`; default measure ndcg@10)."""
    path = Path(source)
    if baseline is None and candidate is None:
        if path.is_dir() or path.name == "results.json":
            raise InputError(
                "a benchmark's results need a baseline and a candidate configuration",
                path=path,
                hint="rankscope check OUT_DIR BASELINE CANDIDATE",
            )
        return check_suite(
            path, out, measures=measures, margin=margin, alpha=alpha, floors=floors, view=view
        )
    if baseline is None or candidate is None:
        raise InputError(
            "name both a baseline and a candidate",
            hint="rankscope check QRELS BASELINE_RUN CANDIDATE_RUN, or OUT_DIR BASELINE "
            "CANDIDATE, or SUITE_FILE alone",
        )
    margin = MARGIN if margin is None else margin
    alpha = ALPHA if alpha is None else alpha
    if path.is_dir() or path.name == "results.json":
        return check_benchmark(
            path,
            baseline,
            candidate,
            measures,
            margin=margin,
            alpha=alpha,
            floors=floors,
            view=view,
        )
    if view is not None:
        raise InputError("--view applies to a benchmark's results only", value=view)
    return check_runs(
        path,
        baseline,
        candidate,
        measures or ("ndcg@10",),
        margin=margin,
        alpha=alpha,
        floors=floors,
        rel_level=rel_level,
    )


def check_suite(
    suite: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    measures: Sequence[str] = (),
    margin: float | None = None,
    alpha: float | None = None,
    floors: Mapping[str, float] | None = None,
    view: Literal["answered", "all"] | None = None,
) -> CheckResult:
    """Check by a suite file's ``check:`` section (baseline and candidate configurations,
    measures, margin, alpha, floors, view; each replaced by the argument when given) on the
    benchmark's output folder ``out`` (default ``rankscope-out/<suite name>``, where
    ``rankscope bench`` writes it)."""
    from rankscope.suite import load_suite

    loaded = load_suite(Path(suite))
    spec = loaded.spec.check
    if spec is None:
        raise InputError(
            "the suite has no check: section",
            path=suite,
            hint="add check: {baseline: NAME, candidate: NAME}, or run rankscope check OUT_DIR "
            "BASELINE CANDIDATE",
        )
    folder = Path(out) if out is not None else Path("rankscope-out") / loaded.name
    if not (folder / "results.json").is_file() and not folder.is_file():
        raise InputError(
            "no benchmark results here",
            path=folder,
            hint=f"run rankscope bench {suite} first, or name the output folder with --out",
        )
    return check_benchmark(
        folder,
        spec.baseline,
        spec.candidate,
        measures or spec.measures or [],
        margin=spec.margin if margin is None else margin,
        alpha=spec.alpha if alpha is None else alpha,
        floors=spec.min if floors is None else floors,
        view=view or spec.view,
    )


__all__ = [
    "ALPHA",
    "MARGIN",
    "WORST",
    "CheckResult",
    "MeasureCheck",
    "MovedQuery",
    "check",
    "check_benchmark",
    "check_runs",
    "check_suite",
    "parse_floors",
]
