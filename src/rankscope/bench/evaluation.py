"""The one place where benchmark rankings meet the measures.

Measures come from :func:`rankscope.evaluate`. Queries are averaged over all judged queries
(trec_eval ``-c``): a configuration that returns nothing for a query scores 0 on it instead of
having the query dropped from its mean, so configurations are compared on the same queries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rankscope.data.qrels import Qrels
from rankscope.data.run import Run
from rankscope.metrics.results import Results


def benchmark_measures(ks: Sequence[int], max_k: int) -> list[str]:
    """Measures a benchmark reports by default, in display order (canonical names)."""
    ks = sorted(set(ks))
    measures = ["ndcg@10", "map", "mrr"]
    for k in ks:
        measures += [f"ndcg@{k}", f"P@{k}", f"recall@{k}", f"hit@{k}"]
    measures.append(f"recall@{max_k}")
    return list(dict.fromkeys(measures))


def ranking_run(rankings: Mapping[str, Sequence[tuple[str, float]]], name: str) -> Run:
    """A :class:`Run` from ``{query_id: [(doc_id, score), ...]}``; a repeated document keeps its
    first (best) score."""
    data: dict[str, dict[str, float]] = {}
    for qid, ranked in rankings.items():
        row: dict[str, float] = {}
        for doc, score in ranked:
            row.setdefault(doc, score)
        data[qid] = row
    return Run.from_dict(data, name=name)


def evaluate_runs(
    qrels: Qrels,
    runs: Mapping[str, Run | Mapping[str, Mapping[str, float]]],
    measures: Sequence[str],
    *,
    depth: int,
    rel_level: int = 1,
) -> Results:
    """Evaluate several runs (keyed by name) against the same judgments, averaged over every
    judged query (``-c``)."""
    from rankscope.metrics.evaluate import evaluate

    return evaluate(
        qrels,
        dict(runs),
        measures=tuple(measures),
        depth=depth,
        rel_level=rel_level,
        average_over_qrels=True,
    )
