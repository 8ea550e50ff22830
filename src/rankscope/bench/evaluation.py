"""The one place where benchmark rankings meet the measures.

Measures come from :func:`rankscope.evaluate`. Queries are averaged over all judged queries
(trec_eval ``-c``): a configuration that returns nothing for a query scores 0 on it instead of
having the query dropped from its mean, so configurations are compared on the same queries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rankscope.data.qrels import Qrels
from rankscope.data.run import Run


@dataclass(frozen=True)
class Evaluation:
    """Measures of one run: the mean over judged queries and per-query values."""

    mean: dict[str, float]
    per_query: dict[str, dict[str, float]]


def benchmark_measures(ks: Sequence[int], max_k: int) -> list[str]:
    """Measures a benchmark reports, in display order (canonical names)."""
    ks = sorted(set(ks))
    measures = ["ndcg@10", "map", "mrr"]
    for k in ks:
        measures += [f"ndcg@{k}", f"P@{k}", f"recall@{k}", f"hit@{k}"]
    measures.append(f"recall@{max_k}")
    return list(dict.fromkeys(measures))


def evaluate_runs(
    qrels: Qrels,
    runs: Mapping[str, Mapping[str, Mapping[str, float]]],
    measures: Sequence[str],
    *,
    depth: int,
    rel_level: int = 1,
) -> dict[str, Evaluation]:
    """Evaluate several runs (``{name: {qid: {doc: score}}}``) against the same judgments."""
    if not runs:
        return {}
    from rankscope.metrics.evaluate import evaluate

    run_values = [Run.from_dict(dict(ranking), name=name) for name, ranking in runs.items()]
    results = evaluate(
        qrels,
        run_values,
        measures=tuple(measures),
        depth=depth,
        rel_level=rel_level,
        average_over_qrels=True,
    )
    out: dict[str, Evaluation] = {}
    for name in runs:
        mean = {m: float(v) for m, v in results.mean(run=name).items()}
        per_query = {
            q: {m: float(v) for m, v in values.items()}
            for q, values in results.per_query(run=name).items()
        }
        out[name] = Evaluation(mean=mean, per_query=per_query)
    return out
