"""``ann_recall@k``: what an approximate vector index costs in recall, against exact search.

It is not a judgment-based measure: for each query it compares the units (documents, or chunks
when the configuration chunks) an engine returned with the exact nearest neighbours of the same
query vector over the same indexed vectors, which the engine computes by brute force
(:class:`~rankscope.engines.vectorstore.ExactNeighbours`: every vector-store engine and the exact
``vector`` engine).

Definition, per query, with ``E`` the exact neighbours in order (exact cosine scores ``s``) and
``A`` the engine's ranking::

    k'  = min(k, |E|)                        (a corpus smaller than k)
    T_k = {u in E : s(u) >= s(E[k'-1]) - tolerance}   (the exact top k and any unit tied with
                                                        the k-th, tolerance 1e-6)
    ann_recall@k = |A[:k] ∩ T_k| / k'

It is 1.0 when the engine returns the exact top k (in any order), and counts a unit tied with
the k-th exact neighbour as a hit, as ann-benchmarks' recall does with its distance threshold
(its epsilon is 1e-3 on distances; here 1e-6 on cosines, float32 rounding). A query without a
vector (empty text, no known word) has no value (``None``).

Both rankings are in the files a benchmark writes: the engine's top units (as many as the
largest ``k``) in ``ann/<name>.units.trec`` and the exact neighbours in
``ann/<name>.exact.trec`` (``.jsonl`` when ids hold whitespace), each in trec_eval's order
(score descending, ties by id descending); :func:`ann_recall_from_files` recomputes the values
results.json holds from them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from rankscope.bench.config_record import ConfigRecord
from rankscope.bench.evaluation import ranking_run
from rankscope.data.run import Run
from rankscope.engines.base import Engine, Hit, Query
from rankscope.engines.neighbours import EXACT_TIE_TOLERANCE
from rankscope.engines.vectorstore import ExactNeighbours

#: how far below the k-th exact cosine a unit still counts as one of the exact top k
TOLERANCE = EXACT_TIE_TOLERANCE


def measure_name(k: int) -> str:
    return f"ann_recall@{k}"


def ann_recall(
    ranking: Sequence[str],
    exact: Sequence[tuple[str, float]],
    k: int,
    tolerance: float = TOLERANCE,
) -> float | None:
    """``ann_recall@k`` of one query: ``ranking`` the engine's units best first, ``exact`` the
    exact neighbours ``(unit, cosine)`` best first (at least the top k and the ties of the
    k-th); None when there are no exact neighbours (the query has no vector)."""
    if k <= 0:
        raise ValueError(f"ann_recall needs k >= 1, got {k}")
    if not exact:
        return None
    depth = min(k, len(exact))
    cutoff = exact[depth - 1][1] - tolerance
    wanted = {unit for unit, score in exact if score >= cutoff}
    found = sum(1 for unit in dict.fromkeys(ranking[:k]) if unit in wanted)
    return found / depth


def exact_rankings(
    engine: Engine, queries: Sequence[Query], depth: int
) -> dict[str, list[tuple[str, float]]] | None:
    """The exact neighbours of every query (``depth`` of them and the ties of the last), or
    None when the engine cannot say (not a vector search)."""
    if not isinstance(engine, ExactNeighbours):
        return None
    out: dict[str, list[tuple[str, float]]] = {}
    for query in queries:
        found = engine.exact_neighbours(query, depth)
        if found is None:
            return None
        out[query.id] = [(h.doc_id, float(h.score)) for h in found]
    return out


def engine_units(
    hits: Mapping[str, Sequence[Hit]], depth: int
) -> dict[str, list[tuple[str, float]]]:
    """The engine's first ``depth`` units of each query (chunks when chunked), as compared."""
    return {q: [(h.doc_id, float(h.score)) for h in ranked[:depth]] for q, ranked in hits.items()}


def _ordered(rankings: Mapping[str, Sequence[tuple[str, float]]]) -> Run:
    """As the files hold them: trec_eval's order (score descending, ties by id descending)."""
    return ranking_run(rankings, "ann")


def ann_recall_values(
    record: ConfigRecord, query_ids: Sequence[str], ks: Sequence[int]
) -> dict[str, list[float | None]]:
    """``{"ann_recall@k": [value per query]}`` aligned on ``query_ids`` (None for a query the
    configuration did not run or that has no vector); empty when the record has no exact
    neighbours."""
    if record.exact_rankings is None or record.ann_units is None:
        return {}
    return _values(_ordered(record.ann_units), _ordered(record.exact_rankings), query_ids, ks)


def _values(
    engine: Run, exact: Run, query_ids: Sequence[str], ks: Sequence[int]
) -> dict[str, list[float | None]]:
    ran = set(exact.query_ids)
    out: dict[str, list[float | None]] = {}
    for k in sorted(set(ks)):
        column: list[float | None] = []
        for q in query_ids:
            if q not in ran:
                column.append(None)
                continue
            ranking = [unit for unit, _ in engine.ranking(q)]
            column.append(ann_recall(ranking, exact.ranking(q), k))
        out[measure_name(k)] = column
    return out


def ann_recall_from_files(
    folder: str | Path,
    *,
    units_file: str,
    exact_file: str,
    query_ids: Sequence[str],
    ks: Sequence[int],
) -> dict[str, list[float | None]]:
    """The ``ann_recall@k`` values of one configuration recomputed from the two files a
    benchmark wrote in ``folder`` (paths as results.json gives them: ``ann_units_file`` and
    ``exact_run_file``)."""
    from rankscope.data import read_run

    base = Path(folder)
    return _values(read_run(base / units_file), read_run(base / exact_file), query_ids, ks)


__all__ = [
    "TOLERANCE",
    "ann_recall",
    "ann_recall_from_files",
    "ann_recall_values",
    "engine_units",
    "exact_rankings",
    "measure_name",
]
