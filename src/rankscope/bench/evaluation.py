"""The one place where benchmark rankings meet the measures.

Measures come from :func:`rankscope.evaluate`. Queries are averaged over all judged queries
(trec_eval ``-c``): a configuration that returns nothing for a query scores 0 on it instead of
having the query dropped from its mean, so configurations are compared on the same queries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rankscope.data.qrels import Qrels
from rankscope.data.run import Run
from rankscope.metrics.names import parse_measure
from rankscope.metrics.results import Results
from rankscope.suite.schema import SuiteSettings


def benchmark_measures(ks: Sequence[int], max_k: int) -> list[str]:
    """Measures a benchmark reports by default, in display order (canonical names)."""
    ks = sorted(set(ks))
    measures = ["ndcg@10", "map", "mrr"]
    for k in ks:
        measures += [f"ndcg@{k}", f"P@{k}", f"recall@{k}", f"hit@{k}"]
    measures.append(f"recall@{max_k}")
    return list(dict.fromkeys(measures))


DEFAULT_HEADLINE = "ndcg@10"
_LABELS = {
    "ndcg": "nDCG",
    "ndcg_exp": "nDCG",
    "map": "MAP",
    "mrr": "MRR",
    "recall": "R",
    "hit": "Hit",
}
_GAINS = {"ndcg": "lin", "ndcg_exp": "exp"}
#: what the gain names in labels mean
GAIN_NOTE = "nDCG lin: gain = grade (trec_eval); nDCG exp: gain = 2^grade - 1"


def measure_label(measure: str) -> str:
    """A short column header: ``nDCG@10 lin`` (trec_eval's linear gain), ``nDCG@10 exp``
    (exponential gain), ``MAP``, ``P@10``, ``R@100``, ``Hit@10``, else the canonical name."""
    m = parse_measure(measure)
    if m.param is not None or m.rel is not None:
        return str(m)
    label = _LABELS.get(m.name, m.name)
    if m.cutoff is not None:
        label += f"@{str(m).rsplit('@', 1)[1]}"
    gain = _GAINS.get(m.name)
    return f"{label} {gain}" if gain else label


def has_gain_label(measures: Sequence[str]) -> bool:
    return any(measure_label(m).endswith((" lin", " exp")) for m in measures)


def suite_measures(settings: SuiteSettings) -> tuple[list[str], str]:
    """The measures a benchmark reports (canonical names, display order) and its headline,
    which is always among them."""
    if settings.measures:
        measures = list(dict.fromkeys(settings.measures))
        headline = settings.headline or measures[0]
    else:
        measures = benchmark_measures(settings.k, settings.max_k)
        headline = settings.headline or DEFAULT_HEADLINE
    if headline not in measures:
        measures.insert(0, headline)
    return measures, headline


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
