"""Per-query scores of several systems aligned to one query set: the input of every comparison.

A paired comparison is only meaningful on one set of queries. rankscope uses the judged queries
(the qrels' queries): a query a system lacks scores 0 (what trec_eval ``-c`` gives an empty
ranking) and is counted as *filled*; a system's queries outside the set are *dropped* and
counted. :class:`ScoreMatrix` holds the result; build it from :class:`~rankscope.Results`
(:meth:`ScoreMatrix.from_results`), from dictionaries (:meth:`ScoreMatrix.from_per_query`) or
from arrays (:meth:`ScoreMatrix.from_arrays`). Nothing here reads a file or evaluates a run:
files go through :mod:`rankscope.compare_io` (``load_scores``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from rankscope.errors import InputError, RankscopeError
from rankscope.stats.quantity import Quantity

if TYPE_CHECKING:  # pragma: no cover
    from rankscope.metrics.names import Measure
    from rankscope.metrics.results import Results


def _byte_order(query_id: str) -> bytes:
    return query_id.encode("utf-8", "surrogatepass")


@dataclass(frozen=True, eq=False, slots=True)
class AlignedScores:
    """Per-query values of several systems on one query set (see :func:`align_scores`).

    ``values[s, q]``; ``observed[s, q]`` is False where system ``s`` lacked query ``q`` and got
    the fill value; ``dropped[s]`` counts the system's queries outside the set.
    """

    systems: tuple[str, ...]
    query_ids: tuple[str, ...]
    values: NDArray[np.float64]
    observed: NDArray[np.bool_]
    dropped: tuple[int, ...]

    @property
    def filled(self) -> tuple[int, ...]:
        return tuple(int(v) for v in (~self.observed).sum(axis=1).tolist())


def align_scores(
    scores: Mapping[str, Mapping[str, float]],
    query_ids: Sequence[str],
    *,
    fill: float = 0.0,
) -> AlignedScores:
    """Align ``{system: {query_id: value}}`` to ``query_ids`` (the qrels' queries).

    A query a system lacks gets ``fill`` (0, as trec_eval ``-c``) and counts as filled; a
    system's queries outside ``query_ids`` are dropped and counted.
    """
    queries = tuple(str(q) for q in query_ids)
    if len(set(queries)) != len(queries):
        raise InputError("the query set lists a query twice", value=len(queries))
    position = {q: i for i, q in enumerate(queries)}
    systems = tuple(str(s) for s in scores)
    values = np.full((len(systems), len(queries)), float(fill), dtype=np.float64)
    observed = np.zeros((len(systems), len(queries)), dtype=np.bool_)
    dropped = []
    for s, per_query in enumerate(scores.values()):
        outside = 0
        for q, v in per_query.items():
            i = position.get(str(q))
            if i is None:
                outside += 1
                continue
            values[s, i] = float(v)
            observed[s, i] = True
        dropped.append(outside)
    return AlignedScores(systems, queries, values, observed, tuple(dropped))


@dataclass(frozen=True, eq=False, slots=True)
class ScoreMatrix:
    """Scores of ``systems`` on ``query_ids`` for each of ``quantities`` (measures, or other
    per-query values such as latency, each with its direction; ``measures`` are their names):
    ``values[k, s, q]`` is quantity ``k`` of system ``s`` on query ``q`` (float64, read-only,
    finite). Measures and names given as ``quantities`` become :class:`Quantity` values.

    ``observed[s, q]`` is False where the system lacked the query and was scored 0
    (:attr:`filled` counts them); ``dropped[s]`` counts the system's queries outside the query
    set. ``query_set`` says where the query set came from (``"qrels"`` by default).
    """

    systems: tuple[str, ...]
    query_ids: tuple[str, ...]
    quantities: tuple[Quantity, ...]
    values: NDArray[np.float64]
    observed: NDArray[np.bool_]
    dropped: tuple[int, ...]
    query_set: str = "qrels"

    def __post_init__(self) -> None:
        quantities = tuple(Quantity.of(q) for q in self.quantities)
        object.__setattr__(self, "quantities", quantities)
        k, m, n = len(quantities), len(self.systems), len(self.query_ids)
        if self.values.shape != (k, m, n):
            raise InputError(
                "scores must be a measures × systems × queries array",
                value=self.values.shape,
                hint=f"expected {(k, m, n)}",
            )
        if self.observed.shape != (m, n) or len(self.dropped) != m:
            raise InputError("observed/dropped do not match the systems and queries")
        for label, names in (
            ("system", self.systems),
            ("measure", self.measures),
            ("query", self.query_ids),
        ):
            if len(set(names)) != len(names):
                twice = next(x for x in names if names.count(x) > 1)
                raise InputError(f"{label} names must be unique", value=twice)
        bad = ~np.isfinite(self.values)
        if bad.any():
            km, s, q = np.argwhere(bad)[0].tolist()
            raise InputError(
                f"measure {self.measures[km]!r} has no finite value for system "
                f"{self.systems[s]!r} on query {self.query_ids[q]!r}",
                value=float(self.values[km, s, q]),
                hint="compare measures with per-query values (gm_map and gm_bpref exist only "
                "as aggregates: use map and bpref)",
            )
        self.values.setflags(write=False)
        self.observed.setflags(write=False)

    # ------------------------------------------------------------------ access
    @property
    def measures(self) -> tuple[str, ...]:
        """The names of the quantities (``"ndcg@10"``, ``"latency_ms"``)."""
        return tuple(q.name for q in self.quantities)

    @property
    def n(self) -> int:
        """The number of queries every comparison uses."""
        return len(self.query_ids)

    @property
    def filled(self) -> tuple[int, ...]:
        """Per system: queries it lacked, scored 0."""
        return tuple(int(v) for v in (~self.observed).sum(axis=1).tolist())

    def scores(self, measure: str | Measure | Quantity) -> NDArray[np.float64]:
        """The systems × queries matrix of one measure (any accepted spelling) or quantity."""
        matrix: NDArray[np.float64] = self.values[self._measure_index(measure)]
        return matrix

    def quantity(self, measure: str | Measure | Quantity) -> Quantity:
        """The quantity ``measure`` names (any accepted spelling of a measure)."""
        return self.quantities[self._measure_index(measure)]

    def _measure_index(self, measure: str | Measure | Quantity) -> int:
        names = self.measures
        name = str(measure)
        if name in names:
            return names.index(name)
        from rankscope.metrics.names import parse_measure  # a spelling the user typed

        try:
            return names.index(str(parse_measure(name)))
        except (ValueError, RankscopeError):
            raise InputError(
                f"measure {name!r} is not in these scores; they hold {', '.join(names)}"
            ) from None

    def system_index(self, system: str) -> int:
        try:
            return self.systems.index(system)
        except ValueError:
            raise InputError(
                f"no system named {system!r}",
                hint=f"systems: {', '.join(self.systems)}",
            ) from None

    def select(
        self,
        systems: Sequence[str] | None = None,
        measures: Sequence[str | Measure | Quantity] | None = None,
    ) -> ScoreMatrix:
        """A matrix with only ``systems`` and ``measures`` (in the order given)."""
        s_idx = [self.system_index(s) for s in (systems or self.systems)]
        m_idx = [self._measure_index(m) for m in (measures or self.quantities)]
        return ScoreMatrix(
            tuple(self.systems[i] for i in s_idx),
            self.query_ids,
            tuple(self.quantities[i] for i in m_idx),
            self.values[np.ix_(m_idx, s_idx)].copy(),
            self.observed[s_idx].copy(),
            tuple(self.dropped[i] for i in s_idx),
            self.query_set,
        )

    # ------------------------------------------------------------------ building
    @classmethod
    def from_arrays(
        cls,
        systems: Sequence[str],
        query_ids: Sequence[str],
        scores: Mapping[str, Any] | Mapping[Measure, Any] | Mapping[Quantity, Any],
        *,
        query_set: str = "given",
    ) -> ScoreMatrix:
        """From ``{measure: array (systems × queries)}`` (a name, a :class:`~rankscope.Measure`
        or a :class:`Quantity` as the key); every value observed, none dropped."""
        quantities = tuple(Quantity.of(m) for m in scores)
        if not quantities:
            raise InputError("no measures given")
        arrays = [np.array(a, dtype=np.float64) for a in scores.values()]
        for m, a in zip(quantities, arrays, strict=True):
            if a.shape != (len(systems), len(query_ids)):
                raise InputError(
                    f"scores of {m.name!r} must be systems × queries",
                    value=a.shape,
                    hint=f"expected {(len(systems), len(query_ids))}",
                )
        values = np.stack(arrays) if arrays else np.zeros((0, len(systems), len(query_ids)))
        return cls(
            tuple(str(s) for s in systems),
            tuple(str(q) for q in query_ids),
            quantities,
            values,
            np.ones((len(systems), len(query_ids)), dtype=np.bool_),
            (0,) * len(systems),
            query_set,
        )

    @classmethod
    def from_per_query(
        cls,
        scores: Mapping[str, Mapping[str, Mapping[str, float]]]
        | Mapping[Quantity, Mapping[str, Mapping[str, float]]],
        query_ids: Sequence[str],
        *,
        query_set: str = "qrels",
    ) -> ScoreMatrix:
        """From ``{measure: {system: {query_id: value}}}`` aligned to ``query_ids``
        (:func:`align_scores`: missing queries score 0, queries outside are dropped)."""
        quantities = tuple(Quantity.of(m) for m in scores)
        if not quantities:
            raise InputError("no measures given")
        aligned = [align_scores(per_system, query_ids) for per_system in scores.values()]
        systems = aligned[0].systems
        for a in aligned[1:]:
            if a.systems != systems:
                raise InputError("every measure must hold the same systems", value=a.systems)
        observed = np.logical_or.reduce([a.observed for a in aligned])
        dropped = tuple(max(col) for col in zip(*(a.dropped for a in aligned), strict=True))
        return cls(
            systems,
            aligned[0].query_ids,
            quantities,
            np.stack([a.values for a in aligned]),
            observed,
            dropped,
            query_set,
        )

    @classmethod
    def from_results(
        cls,
        results: Results,
        *,
        measures: Sequence[str | Measure] | None = None,
        dropped: Mapping[str, int] | None = None,
    ) -> ScoreMatrix:
        """From :func:`rankscope.evaluate` results, on the qrels' queries.

        With ``average_over_qrels=True`` (recommended) every run is already scored on every
        qrels query, the ones it lacks as an empty ranking. Otherwise each run was scored on
        the queries it shares with the qrels, and the queries it lacks are filled with 0 here.
        ``Results`` do not know how many of a run's queries were outside the qrels: pass
        ``dropped`` (``{run: count}``) to report them (``rankscope.compare_io.load_scores`` does).
        """
        runs = [results.run(name) for name in results.run_names]
        if not runs:
            raise InputError("these results hold no runs")
        chosen = [_measure(m) for m in measures] if measures else results.measure_objects
        query_set = set(runs[0].query_ids) | set(runs[0].missing_query_ids)
        for r in runs[1:]:
            if set(r.query_ids) | set(r.missing_query_ids) != query_set:
                raise InputError(
                    "the runs were scored against different qrels", value=r.name
                )  # pragma: no cover - evaluate() scores every run against one qrels
        queries = tuple(sorted(query_set, key=_byte_order))
        position = {q: i for i, q in enumerate(queries)}
        values = np.zeros((len(chosen), len(runs), len(queries)), dtype=np.float64)
        observed = np.ones((len(runs), len(queries)), dtype=np.bool_)
        for s, r in enumerate(runs):
            columns = np.fromiter((position[q] for q in r.query_ids), np.int64, len(r.query_ids))
            for k, measure in enumerate(chosen):
                values[k, s, columns] = results.values(measure, r.name)
            for q in r.missing_query_ids:
                observed[s, position[q]] = False
        counts = dict(dropped or {})
        unknown = set(counts) - set(results.run_names)
        if unknown:
            raise InputError("dropped counts name runs that are not in the results", value=unknown)
        return cls(
            tuple(results.run_names),
            queries,
            tuple(Quantity.of(m) for m in chosen),
            values,
            observed,
            tuple(int(counts.get(name, 0)) for name in results.run_names),
            "qrels",
        )


def _measure(measure: str | Measure) -> Measure:
    from rankscope.metrics.names import parse_measure  # a spelling the user typed

    return parse_measure(measure)


__all__ = ["AlignedScores", "ScoreMatrix", "align_scores"]
