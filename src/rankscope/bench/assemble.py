"""Build the :class:`~rankscope.bench.results.BenchmarkResult` from configuration records.

Every comparison is made on one query set, evaluated with :func:`rankscope.evaluate`:

- ``answered`` (the default view): the judged queries that every successful configuration
  answered (ran, natively or as plain text, without a failure). Quality means, category
  means, latency percentiles and recommendations are all over this set.
- ``all``: every judged query of the suite; a query a configuration skipped or failed scores 0
  (what an empty ranking scores), and latency is over every query the configuration answered.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import numpy as np

from rankscope.bench.ann import TOLERANCE as ANN_TOLERANCE
from rankscope.bench.ann import ann_recall_values
from rankscope.bench.config_record import ConfigRecord
from rankscope.bench.evaluation import evaluate_runs, measure_label, ranking_run, suite_measures
from rankscope.bench.latency import is_empty_query, latency_stats, query_latency_ms
from rankscope.bench.pareto import FRONT_DEFINITION, pareto_front
from rankscope.bench.recommend import (
    BALANCE_FORMULAS,
    Candidate,
    recommend,
    view_statistics,
)
from rankscope.bench.results import (
    NO_CATEGORY,
    VIEW_NAMES,
    BenchmarkResult,
    CategoryScores,
    ConfigResult,
    Duplicate,
    EvaluationInfo,
    Failure,
    ParetoFront,
    Practical,
    QueryArrays,
    QuerySet,
    QueryStatus,
    Recommendations,
    SuiteInfo,
    ViewName,
    ViewScores,
    ViewStatistics,
)
from rankscope.data.qrels import Qrels
from rankscope.data.run import Run
from rankscope.metrics.results import Results
from rankscope.suite.model import Suite

AVERAGING = (
    "mean over the view's judged queries (trec_eval -c): a query a configuration skipped, "
    "failed or found nothing for scores 0"
)
_DESCRIPTIONS: dict[ViewName, str] = {
    "answered": "judged queries every successful configuration answered",
    "all": "every judged query; a query a configuration skipped or failed scores 0",
}
QRELS_STEMS: dict[ViewName, str] = {"answered": "qrels-answered", "all": "qrels"}


def result_qrels(suite: Suite, qrels: Qrels) -> Qrels:
    """The judgments results are computed from: only the suite's queries count, whatever else
    a qrels file judges."""
    return restrict(qrels, {q.id for q in suite.queries})


def comparison_sets(
    suite: Suite, qrels: Qrels, records: Sequence[ConfigRecord]
) -> dict[ViewName, list[str]]:
    """The judged queries of each view, in suite order."""
    judged = set(qrels.query_ids)
    everything = [q.id for q in suite.queries if q.id in judged]
    skipped = {q for r in records if r.ok for q in (*r.skipped_queries, *r.failed_queries)}
    return {"answered": [q for q in everything if q not in skipped], "all": everything}


def restrict(qrels: Qrels, query_ids: set[str]) -> Qrels:
    return Qrels.from_dict(
        {q: j for q, j in qrels.to_dict().items() if q in query_ids}, source=qrels.source
    )


def assemble_results(
    suite: Suite,
    records: Sequence[ConfigRecord],
    qrels: Qrels,
    qrels_files: Mapping[ViewName, str],
    warnings: Sequence[str] = (),
    *,
    num_documents: int,
) -> BenchmarkResult:
    """Evaluate the records' rankings against ``qrels`` (the suite's
    :meth:`~rankscope.suite.model.Suite.scored_qrels`, as :func:`result_qrels` gives them; with
    ``relevance: pattern`` the rankings are credited to pattern units first); ``qrels_files``
    name where each view's judgments were written (see :func:`comparison_sets`);
    ``num_documents`` is the corpus size."""
    settings = suite.settings
    measures, headline = suite_measures(settings)
    qrels = result_qrels(suite, qrels)  # already so when called by the runner
    sets = comparison_sets(suite, qrels, records)
    query_ids = [q.id for q in suite.queries]
    categories = {q.id: q.category or NO_CATEGORY for q in suite.queries}
    has_categories = any(q.category for q in suite.queries)
    ok = [r for r in records if r.ok]
    runs = {r.name: ranking_run(r.rankings, r.name) for r in ok}
    credit = suite.pattern_credit()
    if credit is not None:  # relevance: pattern: code-search rankings as pattern units
        runs = {name: credit.credit(run) for name, run in runs.items()}

    evaluator = _Evaluator(qrels, runs, measures, settings.max_k, settings.relevance_threshold)
    views = {view: evaluator.view(sets[view], categories, has_categories) for view in VIEW_NAMES}
    judged = [q in set(qrels.query_ids) for q in query_ids]
    empty = {q.id for q in suite.queries if is_empty_query(q)}
    duplicates = duplicate_configurations(ok)
    configurations = [
        _config_result(r, views, sets, measures, query_ids, judged, settings.k, empty).model_copy(
            update={"duplicate_of": duplicates.get(r.name)}
        )
        for r in records
    ]
    from rankscope import __version__

    result = BenchmarkResult(
        rankscope_version=__version__,
        timestamp=datetime.now(UTC).isoformat(timespec="seconds"),
        suite=SuiteInfo(
            name=suite.name,
            description=suite.description,
            file=None if suite.path is None else str(suite.path),
            num_documents=num_documents,
            num_queries=len(suite.queries),
            num_judged_queries=len(qrels.query_ids),
            categories=sorted(set(categories.values())) if has_categories else [],
        ),
        settings=settings,
        measures=measures,
        headline=headline,
        query_ids=query_ids,
        judged=judged,
        query_categories=[q.category for q in suite.queries],
        query_sets={
            view: QuerySet(
                description=_DESCRIPTIONS[view],
                query_ids=sets[view],
                qrels_file=qrels_files[view],
            )
            for view in VIEW_NAMES
        },
        averaging=AVERAGING,
        evaluation=EvaluationInfo(
            depth=settings.max_k,
            rel_level=settings.relevance_threshold,
            average_over_qrels=True,
        ),
        configurations=configurations,
        failures=[
            Failure(name=c.name, stage=c.stage, error=c.error) for c in configurations if not c.ok
        ],
        recommendations={},
        balance_formula=BALANCE_FORMULAS[settings.balance],
        warnings=list(warnings),
    )
    return with_statistics(result, fresh=True)


def with_statistics(result: BenchmarkResult, *, fresh: bool = False) -> BenchmarkResult:
    """``result`` with the comparison statistics and recommendations of every view, computed
    from its own per-query arrays (so ``rankscope compare`` reproduces them). Views that
    already have statistics keep them unless ``fresh`` (results written before schema 3 have
    none)."""
    statistics = dict(result.statistics)
    recommendations = dict(result.recommendations)
    for view in VIEW_NAMES:
        if fresh or view not in statistics:
            statistics[view], recommendations[view] = _recommendations(result, view)
        elif (stored := statistics[view].pareto) is None or stored.definition < FRONT_DEFINITION:
            # written before the front was stored, or by its earlier definition
            front = view_pareto(result, view_candidates(result, view))
            statistics[view] = statistics[view].model_copy(
                update={"pareto": front, "practical": Practical.of(result.settings)}
            )
    return result.model_copy(update={"statistics": statistics, "recommendations": recommendations})


class _ViewEvaluation:
    """The evaluations of one view: over its query set and over each category in it."""

    def __init__(self, overall: Results | None, by_category: dict[str, Results]) -> None:
        self.overall = overall
        self.by_category = by_category


class _Evaluator:
    def __init__(
        self,
        qrels: Qrels,
        runs: dict[str, Run],
        measures: list[str],
        depth: int,
        rel_level: int,
    ) -> None:
        self.qrels = qrels
        self.runs = runs
        self.measures = measures
        self.depth = depth
        self.rel_level = rel_level

    def evaluate(self, query_ids: set[str]) -> Results | None:
        if not self.runs or not query_ids:
            return None
        return evaluate_runs(
            restrict(self.qrels, query_ids),
            self.runs,
            self.measures,
            depth=self.depth,
            rel_level=self.rel_level,
        )

    def view(
        self, query_ids: list[str], categories: dict[str, str], has_categories: bool
    ) -> _ViewEvaluation:
        chosen = set(query_ids)
        by_category: dict[str, Results] = {}
        if has_categories:
            for category in sorted(set(categories.values())):
                found = self.evaluate({q for q in chosen if categories[q] == category})
                if found is not None:
                    by_category[category] = found
        return _ViewEvaluation(self.evaluate(chosen), by_category)


def _config_result(
    record: ConfigRecord,
    views: dict[ViewName, _ViewEvaluation],
    sets: dict[ViewName, list[str]],
    measures: list[str],
    query_ids: list[str],
    judged: list[bool],
    ks: Sequence[int] = (),
    empty: set[str] | frozenset[str] = frozenset(),
) -> ConfigResult:
    base = ConfigResult(
        name=record.name,
        status=record.status,
        config=record.config,
        key=record.key,
        resumed=record.resumed,
        rerun_reason=record.rerun_reason,
        error=record.error,
        stage=record.stage,
        started_at=record.started_at,
        finished_at=record.finished_at,
        host=record.host,
    )
    if not record.ok:
        return base
    samples = record.latency_samples_s
    timed: dict[ViewName, list[str]] = {
        "answered": sets["answered"],
        "all": [q for q in query_ids if q in samples],
    }
    ann = ann_recall_values(record, query_ids, ks)
    scores = {
        view: _view_scores(
            record.name,
            evaluation,
            [samples[q] for q in timed[view] if q not in empty],
            sum(1 for q in timed[view] if q in empty),
        ).model_copy(update={"ann_recall": _ann_means(ann, query_ids, sets[view])})
        for view, evaluation in views.items()
    }
    overall = views["all"].overall
    assert overall is not None  # there is a judged query (the runner refuses a suite without)
    per_query = overall.per_query(record.name)
    status: list[QueryStatus] = [
        "skipped"
        if q in record.skipped_queries
        else "failed"
        if q in record.failed_queries
        else "as_text"
        if q in record.as_text_queries
        else "answered"
        for q in query_ids
    ]
    return ConfigResult(
        **base.model_dump(exclude_unset=True),
        index_time_s=record.index_time_s,
        index_cache=record.index_cache,
        index_stats=dict(record.index_stats),
        search_stats=dict(record.search_stats),
        effective_params=dict(record.effective_params),
        engine_notes=list(record.engine_notes),
        short_queries=list(record.short_queries),
        num_documents=record.num_documents,
        num_units=record.num_units,
        fetch_k=record.fetch_k,
        warmup=record.warmup,
        repeats=record.repeats,
        concurrency=record.concurrency,
        qps=record.qps,
        skipped_queries=dict(record.skipped_queries),
        as_text_queries=dict(record.as_text_queries),
        failed_queries=dict(record.failed_queries),
        views=scores,
        per_query=QueryArrays(
            status=status,
            num_results=[len(record.rankings.get(q, ())) for q in query_ids],
            latency_ms=[query_latency_ms(samples.get(q, [])) for q in query_ids],
            values={
                m: [
                    _finite(per_query[q][m]) if is_judged else None
                    for q, is_judged in zip(query_ids, judged, strict=True)
                ]
                for m in measures
            },
            ann_recall=ann,
        ),
        run_file=record.run_file,
        chunks_file=record.chunks_file,
        exact_run_file=record.exact_run_file,
        ann_units_file=record.ann_units_file,
        ann_recall_tolerance=ANN_TOLERANCE if ann else None,
    )


def duplicate_configurations(records: Sequence[ConfigRecord]) -> dict[str, Duplicate]:
    """``{name: Duplicate}`` for each configuration that repeats an earlier one (suite order):
    the same searches (equal ``search_key``: engine, options and the parameters it really
    searched with), or, of the same engine, the same document rankings for every query."""
    out: dict[str, Duplicate] = {}
    by_key: dict[str, str] = {}
    by_run: dict[tuple[str, str], str] = {}
    for record in records:
        run = json.dumps(
            {q: [doc for doc, _ in hits] for q, hits in sorted(record.rankings.items())}
        )
        same_run = by_run.setdefault((record.config.engine, run), record.name)
        if record.search_key is not None:
            same = by_key.setdefault(record.search_key, record.name)
            if same != record.name:
                out[record.name] = Duplicate(of=same, reason="same_search")
                continue
        if same_run != record.name:
            out[record.name] = Duplicate(of=same_run, reason="same_rankings")
    return out


def _ann_means(
    ann: Mapping[str, list[float | None]], query_ids: list[str], chosen: list[str]
) -> dict[str, float | None]:
    """Mean ann_recall@k over the view's queries that have a value."""
    rows = [i for i, q in enumerate(query_ids) if q in set(chosen)]
    means: dict[str, float | None] = {}
    for name, column in ann.items():
        values = [v for v in (column[i] for i in rows) if v is not None]
        means[name] = float(np.mean(values)) if values else None
    return means


def _view_scores(
    name: str, evaluation: _ViewEvaluation, samples: list[list[float]], empty: int = 0
) -> ViewScores:
    overall = evaluation.overall
    return ViewScores(
        num_queries=0 if overall is None else len(overall.query_ids(name)),
        summary={} if overall is None else _means(overall, name),
        latency=latency_stats(samples, empty=empty),
        per_category={
            category: CategoryScores(
                num_queries=len(results.query_ids(name)), means=_means(results, name)
            )
            for category, results in evaluation.by_category.items()
        },
    )


def view_candidates(result: BenchmarkResult, view: ViewName) -> list[Candidate]:
    """The successful configurations as the recommendations see them: headline and p50 over
    the view, per-query headline values and latencies over the view's queries (suite order)."""
    headline = result.headline
    position = {q: i for i, q in enumerate(result.query_ids)}
    rows = [position[q] for q in result.query_sets[view].query_ids]
    candidates = []
    for c in result.successful:
        assert c.per_query is not None
        values = c.per_query.values.get(headline, [])
        latencies = c.per_query.latency_ms
        candidates.append(
            Candidate(
                c.name,
                c.view(view).summary.get(headline),
                c.view(view).latency.p50_ms,
                values=np.asarray([_nan(values[i]) for i in rows], dtype=np.float64),
                latencies_ms=np.asarray([_nan(latencies[i]) for i in rows], dtype=np.float64),
            )
        )
    return candidates


def _recommendations(
    result: BenchmarkResult, view: ViewName
) -> tuple[ViewStatistics, Recommendations]:
    """The view's comparison statistics and the recommendations they qualify."""
    candidates = view_candidates(result, view)
    n = len(result.query_sets[view].query_ids)
    label = measure_label(result.headline)
    failures = any(c.failed_queries for c in result.successful)
    described = _describe(view, n, len(result.query_sets["all"].query_ids), failures)
    statistics = view_statistics(
        candidates,
        result.headline,
        label,
        seed=result.settings.seed,
        view=view,
        query_set=described,
    )
    statistics = statistics.model_copy(
        update={
            "pareto": view_pareto(result, candidates),
            "practical": Practical.of(result.settings),
        }
    )
    picks = recommend(
        candidates,
        result.headline,
        label,
        balance=result.settings.balance,
        num_queries=n,
        query_set=described,
        statistics=statistics,
    )
    return statistics, picks


def view_pareto(result: BenchmarkResult, candidates: Sequence[Candidate]) -> ParetoFront:
    """The Pareto front (mean headline and p50 latency, within noise and the practical
    thresholds) of a view's candidates."""
    return pareto_front(
        [c.name for c in candidates],
        np.stack([c.values for c in candidates]) if candidates else np.zeros((0, 0)),
        np.stack([c.latencies_ms for c in candidates]) if candidates else np.zeros((0, 0)),
        p50_ms=[c.p50_ms for c in candidates],
        label=measure_label(result.headline),
        practical=Practical.of(result.settings),
        seed=result.settings.seed,
    )


def _describe(view: ViewName, n: int, total: int, failures: bool = False) -> str:
    left = "skipped or failed" if failures else "skipped"
    if view == "answered" and n < total:
        return f"the {n} queries every configuration answered ({total - n} {left} left out)"
    if view == "all" and n:
        return f"all {n} judged queries"
    return f"{n} judged queries"


def _nan(value: float | None) -> float:
    return math.nan if value is None else value


def _means(results: Results, name: str) -> dict[str, float | None]:
    """Aggregates of one run; NaN (no value) becomes None."""
    return {m: _finite(v) for m, v in results.mean(name).items()}


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None
