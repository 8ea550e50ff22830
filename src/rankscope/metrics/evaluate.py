"""``evaluate()``: score one or more runs against qrels on any measures, in one call.

The path of a measure: its name is parsed once into a :class:`Measure`
(:mod:`rankscope.metrics.names`), the run is joined to the qrels
(:func:`~rankscope.metrics.align.align`), and :func:`score_run` hands each measure to its
family's kernel in :mod:`rankscope.metrics.kernels` (trec_eval's measures exactly as trec_eval
computes them, and the measures trec_eval lacks), every query at once.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from rankscope.data.arrow import numpy_array, string_array
from rankscope.data.order import byte_key
from rankscope.data.qrels import Qrels
from rankscope.data.run import Run, renamed, unique_run_names
from rankscope.errors import InputError, RankscopeError
from rankscope.metrics.align import align, query_split
from rankscope.metrics.kernels import (
    aggregate,
    compute,
    group_by_level,
    kernel_for,
    reads_top,
    zeroed_for_stand_in,
)
from rankscope.metrics.names import Measure, parse_measures
from rankscope.metrics.results import Results, RunScores
from rankscope.metrics.segments import offsets_from_counts, positions
from rankscope.metrics.trec_compute import Ctx

QrelsLike: TypeAlias = "Qrels | Mapping[str, Mapping[str, int]] | str | os.PathLike[str]"
RunLike: TypeAlias = "Run | Mapping[str, Mapping[str, float]] | str | os.PathLike[str]"
RunsLike: TypeAlias = "RunLike | Sequence[RunLike] | Mapping[str, RunLike]"

#: what :func:`evaluate` computes when no measure is named
DEFAULT_MEASURES: tuple[str, ...] = ("map", "ndcg@10", "P@10", "recall@100", "mrr")
#: The document trec_eval's ``-c`` ranks for a qrels query the run lacks.
STAND_IN_DOCNO = "ceci_nest_pas_un_docno"


def no_shared_query(run: Run, qrels: Qrels) -> InputError:
    """The error for a run without any query of the qrels, showing three ids of each: ids
    written differently (``q1`` and ``1``, ``301`` and ``0301``) are seen at once."""

    def some(ids: Sequence[str]) -> str:
        shown = ", ".join(repr(i[:40]) for i in sorted(ids)[:3])
        return shown + (f" (3 of {len(ids)})" if len(ids) > 3 else "") if ids else "none"

    return InputError(
        f"run {run.name!r} shares no query with the qrels: the run's query ids are "
        f"{some(run.query_ids)}, the qrels' {some(qrels.query_ids)}",
        path=run.source,
        hint="Check that the run and the qrels use the same query ids",
    )


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
    - ``average_over_qrels`` (``-c``): average over every qrels query; one a run lacks is
      scored as trec_eval ``-c`` scores it (see :func:`score_run`), 0 for most measures.

    Raises :class:`~rankscope.errors.MeasureError` for an unknown measure name and
    :class:`~rankscope.errors.InputError` for unreadable input or a run sharing no query with
    the qrels.
    """
    wanted = parse_measures(measures)  # a bad name fails before any file is read
    the_qrels, runs = _read_inputs(qrels, run)
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


@dataclass(frozen=True, eq=False, slots=True)
class ScoredRun:
    """Raw per-query kernel values of one run (what :func:`score_run` returns).

    - ``query_ids``: the queries scored, byte order: those in both the run and the qrels, or
      with ``average_over_qrels`` every qrels query.
    - ``missing_query_ids``: qrels queries the run lacks.
    - ``stand_in``: per scored query, whether it was scored as trec_eval's ``-c`` stand-in
      ranking (a query the run lacks).
    - ``values``: per measure, one value per query; ``gm_*`` hold logarithms (their aggregate is
      a geometric mean).
    - ``contexts``: the kernels' shared state per relevance level, the default level always
      included (trec_eval's text measures, which are not measures here, read it).
    """

    name: str
    query_ids: tuple[str, ...]
    missing_query_ids: tuple[str, ...]
    stand_in: NDArray[np.bool_]
    values: dict[Measure, NDArray[np.float64]]
    contexts: dict[int, Ctx]


def score_run(
    qrels: Qrels,
    run: Run,
    measures: Sequence[Measure],
    *,
    depth: int | None = None,
    rel_level: int = 1,
    judged_only: bool = False,
    average_over_qrels: bool = False,
    num_docs_in_coll: int = 0,
    all_rows: bool = False,
) -> ScoredRun:
    """Score one run on ``measures`` (see :func:`evaluate` for the options); the one path from
    :class:`Measure` values to their kernels.

    Rank-cutoff measures read only their top rows, so unless ``all_rows`` (or ``judged_only``,
    which re-ranks after dropping rows) the run is joined to the qrels only as deep as the
    deepest cutoff asked for.  With ``average_over_qrels`` a qrels query the run lacks is
    scored as trec_eval 10's ``-c`` scores it: on a one-document stand-in ranking
    (:data:`STAND_IN_DOCNO`), then the measures :func:`~.kernels.zeroed_for_stand_in` names are
    set to 0.  Raises :class:`~rankscope.errors.InputError` when the run shares no query with
    the qrels and ``average_over_qrels`` is off.
    """
    shared, missing = query_split(qrels, run)
    if not shared and not average_over_qrels:
        raise no_shared_query(run, qrels)
    scored = run
    if average_over_qrels and missing:
        scored = with_stand_ins(run, missing)
    aligned = align(
        qrels,
        scored,
        depth=depth if all_rows or judged_only else _needed_depth(measures, depth),
        rel_level=rel_level,
        judged_only=judged_only,
    )
    missing_set = set(missing) if scored is not run else set()
    stand_in = np.fromiter(
        (q in missing_set for q in aligned.query_ids), dtype=np.bool_, count=aligned.num_queries
    )
    values: dict[Measure, NDArray[np.float64]] = {}
    contexts = {rel_level: Ctx(aligned, rel_level, num_docs_in_coll)}  # its arrays are lazy
    for level, group in group_by_level(measures, rel_level).items():
        ctx = contexts.setdefault(level, Ctx(aligned, level, num_docs_in_coll))
        for m, v in compute(ctx, group).items():
            if stand_in.any() and zeroed_for_stand_in(m):
                v = np.where(stand_in, 0.0, v)
            values[m] = v
    return ScoredRun(run.name, aligned.query_ids, missing, stand_in, values, contexts)


def _needed_depth(measures: Sequence[Measure], depth: int | None) -> int | None:
    """The rows per query the measures read: their deepest cutoff when every one has one."""
    tops = [reads_top(m) for m in measures]
    if not tops or any(t is None for t in tops):
        return depth
    deepest = max(t for t in tops if t is not None)
    return deepest if depth is None else min(depth, deepest)


def with_stand_ins(run: Run, missing: Sequence[str]) -> Run:
    """``run`` plus, for each missing query, trec_eval ``-c``'s stand-in ranking: one unknown
    document (:data:`STAND_IN_DOCNO`, score 1)."""
    all_q = sorted([*run.query_ids, *missing], key=byte_key)
    index = {q: i for i, q in enumerate(run.query_ids)}
    n_run = len(run)
    src_start = np.empty(len(all_q), dtype=np.int64)
    counts = np.empty(len(all_q), dtype=np.int64)
    run_counts = np.diff(run.offsets)
    extra = 0
    for k, q in enumerate(all_q):
        i = index.get(q)
        if i is None:
            src_start[k], counts[k] = n_run + extra, 1
            extra += 1
        else:
            src_start[k], counts[k] = run.offsets[i], run_counts[i]
    offsets = offsets_from_counts(counts)
    rows = positions(offsets) + np.repeat(src_start, counts)
    docs = pa.concat_arrays(
        [run.doc_ids.cast(pa.string()), string_array([STAND_IN_DOCNO] * len(missing))]
    )
    scores = np.concatenate([run.scores, np.ones(len(missing), dtype=np.float64)])
    return Run(
        name=run.name,
        query_ids=tuple(all_q),
        offsets=offsets,
        doc_ids=docs.take(numpy_array(rows)),
        scores=scores[rows],
        source=run.source,
    )


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
    scored = score_run(
        qrels,
        run,
        measures,
        depth=depth,
        rel_level=rel_level,
        judged_only=judged_only,
        average_over_qrels=average_over_qrels,
    )
    nq = len(scored.query_ids)
    values = np.zeros((len(measures), nq), dtype=np.float64)
    means = np.zeros(len(measures), dtype=np.float64)
    for i, m in enumerate(measures):
        kernel = kernel_for(m)
        raw = scored.values[m]
        means[i] = aggregate(kernel, raw)
        # geometric means exist only as aggregates: their per-query values are logarithms
        values[i] = np.nan if kernel.aggregate == "gm" else raw
    return RunScores(run.name, scored.query_ids, values, means, scored.missing_query_ids)


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


def _read_inputs(qrels: Any, run: Any) -> tuple[Qrels, list[Run]]:
    """The qrels and the runs.  A qrels file is read on a second thread while the runs are
    read, one after the other (a large run already parses on every core; two at once would
    double the peak memory).  The qrels' error, if any, is raised first, as when reading in
    turn."""
    reading = isinstance(qrels, str | os.PathLike) and (os.cpu_count() or 1) > 1
    if not reading:
        the_qrels = _as_qrels(qrels)
        return the_qrels, unique_run_names([job() for job in _run_jobs(run)])
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(_as_qrels, qrels)
        try:
            runs = [job() for job in _run_jobs(run)]
        except RankscopeError:
            pending.result()  # a bad qrels file is reported first
            raise
        the_qrels = pending.result()
    return the_qrels, unique_run_names(runs)


def _run_jobs(run: Any) -> list[Callable[[], Run]]:
    """One job per run given: reading a file, or taking a value."""
    if isinstance(run, Run | str | os.PathLike):
        return [lambda: _as_run(run)]
    if isinstance(run, Mapping):
        first = next(iter(run.values()), None)
        if first is None or _is_ranking(first):
            return [lambda: Run.from_dict(run)]  # {query_id: {doc_id: score}}
        return [partial(_as_run, r, name=str(name)) for name, r in run.items()]  # {name: run}
    if isinstance(run, Sequence):
        if not run:
            raise InputError("no runs given; pass a run or a list of runs")
        return [partial(_as_run, r) for r in run]
    raise InputError(
        "run must be a Run, a {query_id: {doc_id: score}} dict, a file path, "
        "or a list / {name: run} dict of these",
        value=type(run).__name__,
    )


def _is_ranking(value: object) -> bool:
    """A ``{doc_id: score}`` mapping (rather than a whole run)."""
    if not isinstance(value, Mapping):
        return False
    inner = next(iter(value.values()), None)
    return not isinstance(inner, Mapping)  # {doc_id: score}, whatever the scores hold


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
        the_run = renamed(the_run, name)
    return the_run


def _read_qrels(path: Path) -> Qrels:
    from rankscope.data import read_qrels  # pyarrow: when a file is read, not for arrays

    return read_qrels(path)


def _read_run(path: Path) -> Run:
    from rankscope.data import read_run  # pyarrow: when a file is read, not for arrays

    return read_run(path)


__all__ = [
    "DEFAULT_MEASURES",
    "STAND_IN_DOCNO",
    "ScoredRun",
    "evaluate",
    "score_run",
    "with_stand_ins",
]
