"""``evaluate()``: score one or more runs against qrels on any measures, in one call.

trec_eval's measures come from :func:`rankscope.metrics.trec.trec_measures` (exactly as trec_eval
computes them); the others (``hit@k``, ``judged@k``, ``f1@k``, ``mrr@k``, ``ndcg_exp@k``) from
:mod:`rankscope.metrics.extra`.  Both work on every query at once.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
from numpy.typing import NDArray

from rankscope.data.qrels import Qrels
from rankscope.data.run import Run
from rankscope.errors import InputError, MeasureError
from rankscope.metrics.align import Aligned, align
from rankscope.metrics.extra import ExtraKernel
from rankscope.metrics.names import Measure, parse_measures
from rankscope.metrics.results import Results, RunScores

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.metrics.trec import TrecEvaluation

QrelsLike: TypeAlias = "Qrels | Mapping[str, Mapping[str, int]] | str | os.PathLike[str]"
RunLike: TypeAlias = "Run | Mapping[str, Mapping[str, float]] | str | os.PathLike[str]"
RunsLike: TypeAlias = "RunLike | Sequence[RunLike] | Mapping[str, RunLike]"

DEFAULT_MEASURES: tuple[str, ...] = ("map", "ndcg@10", "P@10", "recall@100", "mrr")


def evaluate(
    qrels: QrelsLike,
    run: RunsLike,
    measures: str | Measure | Iterable[str | Measure] = DEFAULT_MEASURES,
    *,
    depth: int | None = None,
    rel_level: int = 1,
    judged_only: bool = False,
    average_over_qrels: bool = False,
) -> Results:
    """Score ``run`` (one run or several) against ``qrels`` on ``measures``.

    - ``qrels``: a :class:`Qrels`, ``{query_id: {doc_id: grade}}``, or a file path.
    - ``run``: a :class:`Run`, ``{query_id: {doc_id: score}}``, a file path, or several of these
      as a list or as ``{name: run}`` (the key names the run).
    - ``measures``: names in any accepted spelling (see :mod:`rankscope.metrics.names`).
    - ``depth`` (trec_eval ``-M``): keep the top ``depth`` documents of each query.
    - ``rel_level`` (``-l``): the lowest grade counted relevant (a measure's own ``rel=`` wins).
    - ``judged_only`` (``-J``): drop unjudged documents before ranking.
    - ``average_over_qrels`` (``-c``): average over every qrels query, 0 for those a run lacks.

    Raises :class:`~rankscope.errors.MeasureError` for an unknown measure name and
    :class:`~rankscope.errors.InputError` for unreadable input or a run sharing no query with
    the qrels.
    """
    wanted = parse_measures(measures)  # a bad name fails before any file is read
    the_qrels = _as_qrels(qrels)
    runs = _as_runs(run)
    settings = {
        "depth": depth,
        "rel_level": rel_level,
        "judged_only": judged_only,
        "average_over_qrels": average_over_qrels,
    }
    scored = [
        _score_run(
            the_qrels,
            r,
            wanted,
            depth=depth,
            rel_level=rel_level,
            judged_only=judged_only,
            average_over_qrels=average_over_qrels,
        )
        for r in runs
    ]
    return Results(wanted, scored, settings)


def _score_run(
    qrels: Qrels,
    run: Run,
    measures: list[Measure],
    *,
    depth: int | None,
    rel_level: int,
    judged_only: bool,
    average_over_qrels: bool,
) -> RunScores:
    # trec_eval's rule: a run is scored on the queries it shares with the qrels; with -c, on
    # every qrels query (those the run lacks score what an empty ranking scores).
    in_run = set(run.query_ids)
    evaluated = tuple(q for q in qrels.query_ids if q in in_run)
    missing = tuple(q for q in qrels.query_ids if q not in in_run)
    if not evaluated and not average_over_qrels:
        raise InputError(
            f"run {run.name!r} shares no query with the qrels",
            path=run.source,
            hint="Check that the run and the qrels use the same query ids",
        )
    query_ids = qrels.query_ids if average_over_qrels and missing else evaluated
    nq = len(query_ids)
    values = np.zeros((len(measures), nq), dtype=np.float64)
    means = np.zeros(len(measures), dtype=np.float64)

    extras = [i for i, m in enumerate(measures) if m.is_extra]
    trec = [i for i, m in enumerate(measures) if not m.is_extra]
    batches = _trec_batches(measures, trec, rel_level)
    # One join serves the extras and the trec_eval measures at the run's level: the extras only
    # read the top rows of each query, which a deeper join holds as well.
    shared: Aligned | None = None
    if extras and any(level == rel_level for level, _ in batches):
        shared = align(qrels, run, depth=depth, rel_level=rel_level, judged_only=judged_only)
    if extras:
        aligned = (
            shared
            if shared is not None
            else align(
                qrels,
                run,
                depth=_extras_depth([measures[i] for i in extras], depth, judged_only),
                rel_level=rel_level,
                judged_only=judged_only,
            )
        )
        kernel = ExtraKernel(aligned)
        rows = _row_map(aligned.query_ids, query_ids, scatter=True)
        for i in extras:
            computed = kernel.compute(measures[i], rel_level)
            if rows is None:
                values[i] = computed
            else:
                values[i, rows] = computed
            # trec_eval reports 0 for an average over no queries; extras follow it
            means[i] = float(values[i].sum()) / nq if nq else 0.0

    for level, batch in batches:
        evaluation = _run_trec(
            qrels,
            run,
            [measures[i] for i in batch],
            depth=depth,
            rel_level=level,
            judged_only=judged_only,
            average_over_qrels=average_over_qrels,
            aligned=shared if level == rel_level else None,
        )
        rows = _row_map(evaluation.query_ids, query_ids)
        for i in batch:
            column = measures[i].trec_column
            means[i] = _summary_value(evaluation.summary.get(column), column)
            if column in evaluation.per_query:
                per_query = np.asarray(evaluation.per_query[column], dtype=np.float64)
                values[i] = per_query if rows is None else per_query[rows]
            else:  # aggregate-only in trec_eval: gm_map, gm_bpref (NaN per query), num_q
                values[i] = 1.0 if column == "num_q" else np.nan

    return RunScores(run.name, query_ids, values, means, missing)


def _extras_depth(extras: list[Measure], depth: int | None, judged_only: bool) -> int | None:
    """How deep the extras look: cutoff measures never read past their largest cutoff, so only
    that many rows per query need joining to the qrels (unless -J re-ranks after dropping)."""
    if judged_only or any(m.cutoff is None for m in extras):
        return depth
    deepest = max(int(m.cutoff or 0) for m in extras)
    return deepest if depth is None else min(depth, deepest)


def _trec_batches(
    measures: list[Measure], indices: list[int], rel_level: int
) -> list[tuple[int, list[int]]]:
    """Group trec_eval measures into calls: one per relevance level, and more when one family is
    asked for with different free-form parameters (trec_eval takes one per family and call)."""
    batches: list[tuple[int, list[int], dict[str, str | None]]] = []
    for i in indices:
        m = measures[i]
        level = rel_level if m.rel is None else m.rel
        family = m.trec_name or ""
        for batch_level, members, params in batches:
            if batch_level == level and params.get(family, m.param) == m.param:
                members.append(i)
                params[family] = m.param
                break
        else:
            batches.append((level, [i], {family: m.param}))
    return [(level, members) for level, members, _ in batches]


def _trec_specs(measures: Sequence[Measure]) -> list[str]:
    """trec_eval ``-m`` arguments; cutoffs of one family are merged (``P.5,10``) because
    trec_eval reads only the first argument given for a family."""
    cutoffs: dict[str, list[str]] = {}
    specs: dict[str, str] = {}
    for m in measures:
        name = m.trec_name or ""
        if m.cutoff is not None:
            spec = m.trec_spec
            cutoffs.setdefault(name, [])
            value = spec[len(name) + 1 :]
            if value not in cutoffs[name]:
                cutoffs[name].append(value)
            specs.setdefault(name, "")
        else:
            specs[name] = m.trec_spec
    return [
        f"{name}.{','.join(cutoffs[name])}" if name in cutoffs else s for name, s in specs.items()
    ]


def _run_trec(
    qrels: Qrels,
    run: Run,
    measures: Sequence[Measure],
    *,
    depth: int | None,
    rel_level: int,
    judged_only: bool,
    average_over_qrels: bool,
    aligned: Aligned | None = None,
) -> TrecEvaluation:
    from rankscope.metrics.trec import trec_measures

    return trec_measures(
        qrels,
        run,
        _trec_specs(measures),
        depth=depth,
        rel_level=rel_level,
        judged_only=judged_only,
        average_over_qrels=average_over_qrels,
        aligned=aligned,
    )


def _row_map(
    have: tuple[str, ...], want: tuple[str, ...], scatter: bool = False
) -> NDArray[np.int64] | None:
    """Where rows line up (``None`` when ``have == want``): the row of ``have`` for each query of
    ``want``; with ``scatter``, the row of ``want`` for each query of ``have`` instead."""
    if have == want:
        return None
    source, target = (want, have) if scatter else (have, want)
    index = {q: i for i, q in enumerate(source)}
    try:
        return np.fromiter((index[q] for q in target), dtype=np.int64, count=len(target))
    except KeyError as error:  # pragma: no cover - a kernel bug, not user input
        raise MeasureError(f"the measure kernels did not score query {error.args[0]!r}") from None


def _summary_value(value: object, column: str) -> float:
    if value is None:
        raise MeasureError(f"the trec_eval kernels gave no summary for {column!r}")
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            raise MeasureError(f"{column!r} is not numeric ({value!r})") from None
    return float(value)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- inputs
def _as_qrels(qrels: Any) -> Qrels:
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, str | os.PathLike):
        return _read_qrels(Path(qrels))
    if isinstance(qrels, Mapping):
        return Qrels.from_dict(qrels)
    raise InputError(
        "qrels must be a Qrels, a {query_id: {doc_id: grade}} dict or a file path",
        value=type(qrels).__name__,
    )


def _as_runs(run: Any) -> list[Run]:
    runs: list[Run]
    if isinstance(run, Run | str | os.PathLike):
        runs = [_as_run(run)]
    elif isinstance(run, Mapping):
        first = next(iter(run.values()), None)
        if first is None or _is_ranking(first):
            runs = [Run.from_dict(run)]  # {query_id: {doc_id: score}}
        else:  # {name: run}
            runs = [_as_run(r, name=str(name)) for name, r in run.items()]
    elif isinstance(run, Sequence):
        runs = [_as_run(r) for r in run]
        if not runs:
            raise InputError("no runs given; pass a run or a list of runs")
    else:
        raise InputError(
            "run must be a Run, a {query_id: {doc_id: score}} dict, a file path, "
            "or a list / {name: run} dict of these",
            value=type(run).__name__,
        )
    return _unique_names(runs)


def _is_ranking(value: object) -> bool:
    """A ``{doc_id: score}`` mapping (rather than a whole run)."""
    if not isinstance(value, Mapping):
        return False
    inner = next(iter(value.values()), None)
    return inner is None or isinstance(inner, int | float | np.number)


def _as_run(run: Any, name: str | None = None) -> Run:
    if isinstance(run, Run):
        the_run = run
    elif isinstance(run, str | os.PathLike):
        the_run = _read_run(Path(run))
    elif isinstance(run, Mapping):
        the_run = Run.from_dict(run, name=name or "run")
    else:
        raise InputError(
            "a run must be a Run, a {query_id: {doc_id: score}} dict or a file path",
            value=type(run).__name__,
        )
    if name is not None and the_run.name != name:
        the_run = _renamed(the_run, name)
    return the_run


def _unique_names(runs: list[Run]) -> list[Run]:
    """Runs named alike (two files with the same runid) are named by file name instead, or
    get ``-2``, ``-3`` suffixes when that does not tell them apart."""
    names = [r.name for r in runs]
    if len(set(names)) == len(names):
        return runs
    files = [Path(r.source).name if r.source else None for r in runs]
    if None not in files and len(set(files)) == len(files):
        return [_renamed(r, str(f)) for r, f in zip(runs, files, strict=True)]
    seen: dict[str, int] = {}
    out = []
    for r in runs:
        count = seen.get(r.name, 0) + 1
        seen[r.name] = count
        out.append(r if count == 1 else _renamed(r, f"{r.name}-{count}"))
    return out


def _renamed(run: Run, name: str) -> Run:
    return dataclasses.replace(run, name=name)


def _read_qrels(path: Path) -> Qrels:
    from rankscope.data import read_qrels

    return read_qrels(path)


def _read_run(path: Path) -> Run:
    from rankscope.data import read_run

    return read_run(path)


__all__ = ["DEFAULT_MEASURES", "evaluate"]
