"""Assemble ``results.json`` (documented in docs/results-schema.md) from configuration records."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from rankscope.bench.evaluation import benchmark_measures, evaluate_runs
from rankscope.bench.latency import latency_stats
from rankscope.bench.recommend import BALANCE_FORMULA, QUALITY_MEASURE, recommend
from rankscope.data.qrels import Qrels
from rankscope.suite.model import Suite

SCHEMA_VERSION = 1
NO_CATEGORY = "(none)"


@dataclass(frozen=True)
class BenchmarkResult:
    """The outcome of a benchmark; ``data`` is exactly what ``results.json`` holds."""

    data: dict[str, Any]

    @property
    def configurations(self) -> list[dict[str, Any]]:
        return list(self.data["configurations"])

    @property
    def measures(self) -> list[str]:
        return list(self.data["measures"])

    def config(self, name: str) -> dict[str, Any]:
        for entry in self.data["configurations"]:
            if entry["name"] == name:
                return dict(entry)
        raise KeyError(name)

    @property
    def failures(self) -> list[dict[str, Any]]:
        return list(self.data["failures"])

    @property
    def recommendations(self) -> dict[str, Any]:
        return dict(self.data["recommendations"])


def assemble_results(
    suite: Suite, records: Sequence[dict[str, Any]], qrels: Qrels
) -> BenchmarkResult:
    settings = suite.settings
    measures = benchmark_measures(settings.k, settings.max_k)
    ok = [r for r in records if r["status"] == "ok"]
    runs = {
        r["name"]: {
            qid: {doc: score for doc, score in ranked} for qid, ranked in r["rankings"].items()
        }
        for r in ok
    }
    evaluations = evaluate_runs(
        qrels, runs, measures, depth=settings.max_k, rel_level=settings.relevance_threshold
    )
    categories = {q.id: q.category or NO_CATEGORY for q in suite.queries}
    has_categories = any(q.category for q in suite.queries)
    judged = set(qrels.query_ids) & {q.id for q in suite.queries}

    configurations: list[dict[str, Any]] = []
    for record in records:
        entry: dict[str, Any] = {
            "name": record["name"],
            "status": record["status"],
            "config": record["config"],
            "key": record.get("key"),
            "resumed": bool(record.get("resumed", False)),
            "error": record.get("error"),
            "stage": record.get("stage"),
            "started_at": record.get("started_at"),
            "finished_at": record.get("finished_at"),
        }
        if record["status"] == "ok":
            evaluation = evaluations[record["name"]]
            samples = record["latency_samples_s"]
            stats = latency_stats(s for values in samples.values() for s in values)
            entry.update(
                {
                    "index_time_s": record["index_time_s"],
                    "num_documents": record["num_documents"],
                    "num_units": record["num_units"],
                    "fetch_k": record["fetch_k"],
                    "warmup": record["warmup"],
                    "repeats": record["repeats"],
                    "concurrency": record.get("concurrency", 1),
                    "qps": record.get("qps"),
                    "latency": stats.to_dict(),
                    "summary": {m: evaluation.mean.get(m) for m in measures},
                    "per_category": (
                        _per_category(evaluation.per_query, categories, measures)
                        if has_categories
                        else {}
                    ),
                    "per_query": _per_query(
                        record, evaluation.per_query, categories, measures, judged
                    ),
                    "skipped_queries": dict(record.get("skipped_queries") or {}),
                    "run_file": record.get("run_file"),
                    "chunks_file": record.get("chunks_file"),
                }
            )
        configurations.append(entry)

    rows = [
        {
            "name": c["name"],
            "quality": c["summary"].get(QUALITY_MEASURE),
            "p50_ms": c["latency"]["p50_ms"],
        }
        for c in configurations
        if c["status"] == "ok"
    ]
    recommendations = {k: v.to_dict() for k, v in recommend(rows).items()}
    from rankscope import __version__

    data = {
        "schema_version": SCHEMA_VERSION,
        "rankscope_version": __version__,
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "suite": {
            "name": suite.name,
            "description": suite.description,
            "file": None if suite.path is None else str(suite.path),
            "num_documents": len(suite.documents()),
            "num_queries": len(suite.queries),
            "num_judged_queries": len(judged),
            "categories": sorted({c for c in categories.values()}) if has_categories else [],
        },
        "settings": settings.model_dump(mode="json"),
        "measures": measures,
        "averaging": "mean over all judged queries (trec_eval -c); unretrieved queries score 0",
        "configurations": configurations,
        "failures": [
            {"name": c["name"], "stage": c["stage"], "error": c["error"]}
            for c in configurations
            if c["status"] != "ok"
        ],
        "recommendations": recommendations,
        "balance_formula": BALANCE_FORMULA,
    }
    return BenchmarkResult(_clean(data))


def _per_category(
    per_query: dict[str, dict[str, float]], categories: dict[str, str], measures: list[str]
) -> dict[str, dict[str, float]]:
    groups: dict[str, list[dict[str, float]]] = {}
    for qid, values in per_query.items():
        groups.setdefault(categories.get(qid, NO_CATEGORY), []).append(values)
    out: dict[str, dict[str, float]] = {}
    for category in sorted(groups):
        rows = groups[category]
        out[category] = {m: sum(r.get(m, 0.0) for r in rows) / len(rows) for m in measures}
        out[category]["num_queries"] = len(rows)
    return out


def _per_query(
    record: dict[str, Any],
    per_query: dict[str, dict[str, float]],
    categories: dict[str, str],
    measures: list[str],
    judged: set[str],
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for qid, samples in record["latency_samples_s"].items():
        values = per_query.get(qid, {})
        row: dict[str, Any] = {m: values.get(m) for m in measures} if qid in judged else {}
        row["judged"] = qid in judged
        row["category"] = categories.get(qid, NO_CATEGORY)
        row["num_results"] = len(record["rankings"].get(qid, []))
        row["latency_ms"] = 1000.0 * sum(samples) / len(samples) if samples else None
        out[qid] = row
    for qid, reason in (record.get("skipped_queries") or {}).items():
        values = per_query.get(qid, {})
        row = {m: values.get(m, 0.0) for m in measures} if qid in judged else {}
        row.update(
            judged=qid in judged,
            category=categories.get(qid, NO_CATEGORY),
            num_results=0,
            latency_ms=None,
            skipped=reason,
        )
        out[qid] = row
    return out


def _clean(value: Any) -> Any:
    """NaN and infinities become null so results.json is strict JSON."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value
