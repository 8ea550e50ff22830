"""Files in, a comparison out: the loader of ``rankscope compare QRELS RUN RUN...``.

:mod:`rankscope.stats` computes on aligned per-query arrays and never reads a file or evaluates
a run. This module does that part: :func:`load_scores` reads qrels and runs (paths or values),
scores them with :func:`rankscope.evaluate` on every qrels query and counts each run's queries
outside the qrels as dropped; :func:`resolve_baseline` finds a baseline named by its file;
:func:`compare_runs` does both and :func:`rankscope.stats.compare`. ``rankscope.stats`` never
imports this module: the layers point one way (tests/test_imports.py).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rankscope.data import Qrels, Run, read_qrels, read_run
from rankscope.errors import InputError
from rankscope.metrics.evaluate import evaluate
from rankscope.metrics.names import Measure
from rankscope.stats.compare import compare
from rankscope.stats.comparison import Comparison
from rankscope.stats.matrix import ScoreMatrix


def load_scores(
    qrels: Qrels | str | os.PathLike[str] | Any,
    runs: Sequence[Run | str | os.PathLike[str] | Any],
    measures: Sequence[str | Measure],
    *,
    depth: int | None = None,
    rel_level: int = 1,
    judged_only: bool = False,
) -> ScoreMatrix:
    """Read ``qrels`` and ``runs`` (paths or values), score them with
    :func:`rankscope.evaluate` on every qrels query (``average_over_qrels=True``), and count
    each run's queries outside the qrels as dropped."""
    the_qrels = qrels if isinstance(qrels, Qrels) else read_qrels(qrels)
    the_runs = [r if isinstance(r, Run) else read_run(r) for r in runs]
    results = evaluate(
        the_qrels,
        the_runs,
        list(measures),
        depth=depth,
        rel_level=rel_level,
        judged_only=judged_only,
        average_over_qrels=True,
    )
    judged = set(the_qrels.query_ids)
    dropped = {
        name: sum(1 for q in run.query_ids if q not in judged)
        for name, run in zip(results.run_names, the_runs, strict=True)
    }
    return ScoreMatrix.from_results(results, dropped=dropped)


def resolve_baseline(baseline: str, runs: Sequence[Any], systems: Sequence[str]) -> str:
    """The system ``baseline`` names: a system name as it is, else the run given as that path,
    file name or stem (``systems[i]`` is the name of ``runs[i]``)."""
    if baseline in systems:
        return baseline
    matches = []
    for i, run in enumerate(runs):
        if isinstance(run, str | os.PathLike):
            path = Path(run)
            if baseline in (str(run), path.name, path.stem):
                matches.append(i)
    if len(matches) > 1:
        raise InputError(
            f"the baseline {baseline!r} matches several runs",
            value=[systems[i] for i in matches],
            hint="name the run by its run name or full path",
        )
    return systems[matches[0]] if matches else baseline


def compare_runs(
    qrels: Qrels | str | os.PathLike[str] | Any,
    runs: Sequence[Run | str | os.PathLike[str] | Any],
    measures: Sequence[str | Measure] = ("ndcg@10",),
    *,
    baseline: str | None = None,
    depth: int | None = None,
    rel_level: int = 1,
    judged_only: bool = False,
    **options: Any,
) -> Comparison:
    """Score ``runs`` against ``qrels`` on every qrels query (:func:`load_scores`) and
    :func:`rankscope.stats.compare` them (``options`` go to compare).

    ``baseline`` names a run by its name, or by the file name, stem or path it was given as.
    """
    if len(runs) < 2:
        raise InputError(
            "a comparison needs at least two runs", value=len(runs), hint="give two or more runs"
        )
    scores = load_scores(
        qrels, runs, measures, depth=depth, rel_level=rel_level, judged_only=judged_only
    )
    if baseline is not None:
        baseline = resolve_baseline(baseline, runs, scores.systems)
    return compare(scores, baseline=baseline, **options)


__all__ = ["compare_runs", "load_scores", "resolve_baseline"]
