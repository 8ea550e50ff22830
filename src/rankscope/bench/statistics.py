"""Is a configuration's lead real? The benchmark's comparison statistics.

For each view (one query set, see :mod:`rankscope.bench.assemble`) the benchmark compares its
successful configurations twice, with :func:`rankscope.stats.compare`:

- **quality**: the headline measure per query, against the best configuration, by the
  randomised Tukey HSD (``test="rtukey"``: every query's row of scores permuted across the
  configurations, B = 10,000 seeded draws, family-wise over all pairs of configurations).
  Tukey's procedure holds for every pair at once, so comparing with a baseline picked *after*
  looking at the means (the best) is sound, which a correction over "the others vs the best"
  would not quite be;
- **latency**: each query's latency (the median of its timed passes), against the fastest, by
  the paired randomization test (sign flips of the per-query differences; exact for n <= 30,
  else B = 10,000 seeded draws), Holm-corrected over the comparisons with the fastest.
  Latencies of different engines differ by orders of magnitude: permuting them across all
  configurations, as the randomised Tukey HSD does, lets the slowest engines' spread swamp the
  difference between two fast ones (in the demo, SQLite at 2.8 ms against tantivy at 0.32 ms,
  slower on 80 of 80 queries, got p = 0.997). Each pair is therefore tested on its own queries.

Each configuration gets its mean with a 95% t interval and, against the baseline, the
difference with its 95% interval (simultaneous for Tukey, paired t for latency), the p-value and
whether it is significantly worse: the :class:`rankscope.stats.Comparison` of
:func:`rankscope.stats.compare` itself, kept in a
:class:`~rankscope.bench.results.ConfigurationComparison` beside what only the benchmark knows
(latency is :data:`~rankscope.bench.latency.LATENCY_QUANTITY`, lower is better, so the rows'
directions are in its sense). :func:`score_matrix` builds the same matrix from a
``results.json``, so ``rankscope compare OUT_DIR`` with the arguments in
:attr:`ConfigurationComparison.command` prints the same numbers.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from rankscope.bench.latency import LATENCY, LATENCY_QUANTITY, is_latency
from rankscope.bench.results import (
    ALPHA,
    LEVEL,
    QUALITY_TEST,
    RESAMPLES,
    Alone,
    BenchmarkResult,
    BenchTest,
    ConfigurationComparison,
    ViewName,
)
from rankscope.errors import InputError, RankscopeError
from rankscope.stats.quantity import Quantity

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.stats import Comparison, ScoreMatrix


def compare_configurations(
    names: Sequence[str],
    values: NDArray[np.float64],
    *,
    quantity: Quantity,
    baseline: str,
    baseline_reason: str,
    label: str,
    query_set: str,
    view: str = "answered",
    test: BenchTest = QUALITY_TEST,
    seed: int = 0,
    resamples: int = RESAMPLES,
    alpha: float = ALPHA,
) -> ConfigurationComparison:
    """Compare ``names`` (rows of ``values``, configurations × queries: values of ``quantity``,
    whose direction decides what is better) with ``baseline`` by ``test``: the randomised Tukey
    HSD over all pairs, or the paired randomization test of each configuration against the
    baseline, Holm-corrected.

    One configuration gets its mean and interval only. Raises
    :class:`~rankscope.errors.InputError` with fewer than 2 queries or non-finite values;
    everything else (few queries, zero variance, a constant quantity) is a warning in
    ``warnings``.
    """
    from rankscope.stats import ScoreMatrix, StatsWarning, SystemRow, compare, t_interval

    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] != len(names):
        raise InputError("values must be configurations × queries", value=x.shape)
    n = x.shape[1]
    if n < 2:
        raise InputError(
            f"{label}: a comparison needs at least 2 queries",
            value=n,
            hint="add judged queries to the suite",
        )
    measure = quantity.name
    command = f"--view {view} -m {measure} --test {test} --baseline {baseline} --seed {seed}" + (
        "" if resamples == RESAMPLES else f" --resamples {resamples}"
    )
    if len(names) < 2:
        interval = t_interval(x[0], LEVEL, bounds=quantity.bounds)
        row = SystemRow(measure, names[0], True, float(x[0].mean()), interval)
        return ConfigurationComparison(
            label=label,
            baseline_reason=baseline_reason,
            command=command,
            alone=Alone(row=row, queries=n),
        )
    matrix = ScoreMatrix(
        tuple(names),
        tuple(str(i) for i in range(n)),
        (quantity,),
        x[np.newaxis].copy(),
        np.ones(x.shape, dtype=np.bool_),
        (0,) * len(names),
        query_set,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatsWarning)  # kept in the comparison's warnings
        found = compare(
            matrix,
            baseline=baseline,
            test=test,
            correction="holm",
            seed=seed,
            resamples=resamples,
            alpha=alpha,
        )
    return ConfigurationComparison(
        label=label, baseline_reason=baseline_reason, command=command, comparison=found
    )


# ---------------------------------------------------------------------------- from results.json
def score_matrix(
    result: BenchmarkResult, measures: Sequence[str], view: ViewName | None = None
) -> ScoreMatrix:
    """The successful configurations (suite order) × the view's queries (suite order), for
    each of ``measures`` (``latency_ms``, alias ``latency``: each query's latency in ms),
    read from a benchmark's typed results: the matrix the benchmark's statistics came from.

    A query a configuration skipped or failed (``all`` view) scores 0 and counts as filled. Latency
    exists only for queries a configuration ran: it is compared over the view's queries every
    configuration ran, and cannot be mixed with measures when that set is smaller.
    """
    from rankscope.stats import ScoreMatrix

    chosen: ViewName = view or result.default_view
    if chosen not in result.query_sets:
        raise InputError(f"no view {chosen!r} in these results", hint="use answered or all")
    configs = result.successful
    if not configs:
        raise InputError(
            "the benchmark has no successful configuration to compare",
            value=[f.name for f in result.failures],
        )
    from rankscope.metrics.names import parse_measure

    quantities = {
        q.name: q
        for q in (
            LATENCY_QUANTITY if is_latency(m) else Quantity.of(parse_measure(m)) for m in measures
        )
    }
    wanted = list(quantities)
    if not wanted:
        raise InputError("no measures to compare")
    ids = list(result.query_sets[chosen].query_ids)
    position = {q: i for i, q in enumerate(result.query_ids)}
    rows = [position[q] for q in ids]
    arrays = [c.per_query for c in configs]
    assert all(a is not None for a in arrays)
    query_set = f"{_view_text(chosen)} (view {chosen})"
    if LATENCY in wanted:
        timed = [
            i
            for i, row in enumerate(rows)
            if all(a is not None and a.latency_ms[row] is not None for a in arrays)
        ]
        if len(timed) < len(rows):
            if len(wanted) > 1:
                raise InputError(
                    f"latency was measured on {len(timed)} of the {len(rows)} queries of the "
                    f"{chosen} view (a configuration skipped the others)",
                    hint="compare latency on its own (-m latency), or use --view answered",
                )
            rows = [rows[i] for i in timed]
            ids = [ids[i] for i in timed]
            query_set = (
                f"the {len(rows)} queries of the {chosen} view whose latency every "
                "configuration measured"
            )
    for m in wanted:
        if m != LATENCY and m not in result.measures:
            raise RankscopeError(
                f"{m!r} was not measured; measured: {', '.join(result.measures)}",
            )
    values = np.zeros((len(wanted), len(configs), len(rows)), dtype=np.float64)
    for k, m in enumerate(wanted):
        for s, a in enumerate(arrays):
            assert a is not None
            column = a.latency_ms if m == LATENCY else a.values[m]
            values[k, s] = [math.nan if column[i] is None else column[i] for i in rows]
    observed = np.asarray(
        [
            [a is not None and a.status[i] not in ("skipped", "failed") for i in rows]
            for a in arrays
        ],
        dtype=np.bool_,
    ).reshape(len(configs), len(rows))
    return ScoreMatrix(
        tuple(c.name for c in configs),
        tuple(ids),
        tuple(quantities.values()),
        values,
        observed,
        (0,) * len(configs),
        query_set,
    )


def _view_text(view: str) -> str:
    if view == "answered":
        return "the judged queries every configuration answered"
    return "every judged query, a skipped one scoring 0"


def compare_benchmark(
    result: BenchmarkResult,
    measures: Sequence[str] | None = None,
    *,
    view: ViewName | None = None,
    baseline: str | None = None,
    **options: Any,
) -> Comparison:
    """Compare a benchmark's successful configurations with :func:`rankscope.stats.compare`
    (``options`` go to it) on ``measures`` (default: the headline, and MAP when measured; any
    measure the benchmark reported, or ``latency``) over one view's queries (default: those
    every configuration answered). ``baseline`` defaults to the first configuration."""
    from rankscope.stats import compare

    chosen: ViewName = view or result.default_view
    ok = [c.name for c in result.successful]
    failed = {c.name: c for c in result.configurations if not c.ok}
    if len(ok) < 2:
        raise InputError(
            f"a comparison needs at least two configurations that ran; this benchmark has "
            f"{len(ok)} ({', '.join(ok) or 'none'})"
            + (f", and {len(failed)} failed ({', '.join(failed)})" if failed else ""),
            hint="compare a benchmark of two or more configurations",
        )
    if baseline is not None and baseline not in ok:
        if baseline in failed:
            raise InputError(
                f"the baseline {baseline!r} failed ({failed[baseline].error}); it has no scores",
                hint=f"name one of {', '.join(ok)}",
            )
        raise InputError(
            f"the baseline {baseline!r} is not a configuration of this benchmark",
            hint=f"name one of {', '.join(ok)}",
        )
    n = len(result.query_sets[chosen].query_ids)
    if n == 0:
        raise InputError(
            f"no judged query in the {chosen} view: the configurations answered no judged "
            "query in common",
            hint="use --view all (every judged query, a skipped one scoring 0)",
        )
    wanted = list(measures or _default_measures(result))
    # latency is lower-is-better (LATENCY_QUANTITY): compare() marks a faster one better
    return compare(score_matrix(result, wanted, chosen), baseline=baseline, **options)


def _default_measures(result: BenchmarkResult) -> list[str]:
    return list(dict.fromkeys([result.headline, *(["map"] if "map" in result.measures else [])]))


__all__ = ["compare_benchmark", "compare_configurations", "score_matrix"]
