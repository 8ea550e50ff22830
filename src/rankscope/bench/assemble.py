"""Build the :class:`~rankscope.bench.results.BenchmarkResult` from configuration records."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime

from rankscope.bench.evaluation import benchmark_measures, evaluate_runs, ranking_run
from rankscope.bench.latency import latency_stats
from rankscope.bench.recommend import (
    BALANCE_FORMULA,
    QUALITY_MEASURE,
    Candidate,
    recommend,
)
from rankscope.bench.records import ConfigRecord
from rankscope.bench.results import (
    NO_CATEGORY,
    BenchmarkResult,
    CategoryScores,
    ConfigResult,
    EvaluationInfo,
    Failure,
    QueryArrays,
    QueryStatus,
    SuiteInfo,
    ViewScores,
)
from rankscope.data.qrels import Qrels
from rankscope.metrics.results import Results
from rankscope.suite.model import Suite

AVERAGING = "mean over all judged queries (trec_eval -c); unretrieved queries score 0"


def assemble_results(
    suite: Suite, records: Sequence[ConfigRecord], qrels: Qrels, qrels_file: str
) -> BenchmarkResult:
    """Evaluate the records' rankings against ``qrels`` (the suite's judgments, as
    :func:`result_qrels` gives them, written to ``qrels_file``)."""
    settings = suite.settings
    measures = benchmark_measures(settings.k, settings.max_k)
    query_ids = [q.id for q in suite.queries]
    suite_qrels = result_qrels(suite, qrels)  # already so when called by the runner
    judged_set = set(suite_qrels.query_ids)
    judged = [q in judged_set for q in query_ids]
    categories = {q.id: q.category or NO_CATEGORY for q in suite.queries}
    has_categories = any(q.category for q in suite.queries)

    ok = [r for r in records if r.ok]
    runs = {r.name: ranking_run(r.rankings, r.name) for r in ok}
    depth, level = settings.max_k, settings.relevance_threshold
    evaluation = evaluate_runs(suite_qrels, runs, measures, depth=depth, rel_level=level)
    by_category: dict[str, Results] = {}
    if has_categories and runs:
        for category in sorted(set(categories.values())):
            members = {q for q in judged_set if categories[q] == category}
            if members:
                by_category[category] = evaluate_runs(
                    _restrict(qrels, members), runs, measures, depth=depth, rel_level=level
                )

    configurations = [
        _config_result(r, evaluation, by_category, measures, query_ids, judged) for r in records
    ]
    candidates = [
        Candidate(c.name, c.view("all").summary.get(QUALITY_MEASURE), c.view("all").latency.p50_ms)
        for c in configurations
        if c.ok
    ]
    from rankscope import __version__

    return BenchmarkResult(
        rankscope_version=__version__,
        timestamp=datetime.now(UTC).isoformat(timespec="seconds"),
        suite=SuiteInfo(
            name=suite.name,
            description=suite.description,
            file=None if suite.path is None else str(suite.path),
            num_documents=len(suite.documents()),
            num_queries=len(suite.queries),
            num_judged_queries=len(judged_set),
            categories=sorted(set(categories.values())) if has_categories else [],
        ),
        settings=settings,
        measures=measures,
        headline=QUALITY_MEASURE,
        query_ids=query_ids,
        judged=judged,
        query_categories=[q.category for q in suite.queries],
        averaging=AVERAGING,
        evaluation=EvaluationInfo(
            qrels_file=qrels_file,
            depth=depth,
            rel_level=level,
            average_over_qrels=True,
        ),
        configurations=configurations,
        failures=[
            Failure(name=c.name, stage=c.stage, error=c.error) for c in configurations if not c.ok
        ],
        recommendations=recommend(candidates),
        balance_formula=BALANCE_FORMULA,
    )


def _config_result(
    record: ConfigRecord,
    evaluation: Results,
    by_category: dict[str, Results],
    measures: list[str],
    query_ids: list[str],
    judged: list[bool],
) -> ConfigResult:
    entry = ConfigResult(
        name=record.name,
        status=record.status,
        config=record.config,
        key=record.key,
        resumed=record.resumed,
        error=record.error,
        stage=record.stage,
        started_at=record.started_at,
        finished_at=record.finished_at,
    )
    if not record.ok:
        return entry
    samples = record.latency_samples_s
    scores = ViewScores(
        num_queries=len(evaluation.query_ids(record.name)),
        summary=_means(evaluation, record.name),
        latency=latency_stats(s for values in samples.values() for s in values),
        per_category={
            category: CategoryScores(
                num_queries=len(results.query_ids(record.name)),
                means=_means(results, record.name),
            )
            for category, results in by_category.items()
        },
    )
    per_query = evaluation.per_query(record.name)
    status: list[QueryStatus] = [
        "skipped" if q in record.skipped_queries else "answered" for q in query_ids
    ]
    return entry.model_copy(
        update={
            "index_time_s": record.index_time_s,
            "index_cache": record.index_cache,
            "num_documents": record.num_documents,
            "num_units": record.num_units,
            "fetch_k": record.fetch_k,
            "warmup": record.warmup,
            "repeats": record.repeats,
            "concurrency": record.concurrency,
            "qps": record.qps,
            "skipped_queries": dict(record.skipped_queries),
            "views": {"all": scores},
            "per_query": QueryArrays(
                status=status,
                num_results=[len(record.rankings.get(q, ())) for q in query_ids],
                latency_ms=[_mean_ms(samples.get(q)) for q in query_ids],
                values={
                    m: [
                        _finite(per_query[q][m]) if is_judged else None
                        for q, is_judged in zip(query_ids, judged, strict=True)
                    ]
                    for m in measures
                },
            ),
            "run_file": record.run_file,
            "chunks_file": record.chunks_file,
        }
    )


def _means(results: Results, name: str) -> dict[str, float | None]:
    """Aggregates of one run; NaN (no value) becomes None."""
    return {m: _finite(v) for m, v in results.mean(name).items()}


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def result_qrels(suite: Suite, qrels: Qrels) -> Qrels:
    """The judgments results are computed from: only the suite's queries count, whatever else
    a qrels file judges."""
    return _restrict(qrels, {q.id for q in suite.queries})


def _mean_ms(samples: list[float] | None) -> float | None:
    return 1000.0 * sum(samples) / len(samples) if samples else None


def _restrict(qrels: Qrels, query_ids: set[str]) -> Qrels:
    return Qrels.from_dict(
        {q: j for q, j in qrels.to_dict().items() if q in query_ids}, source=qrels.source
    )
