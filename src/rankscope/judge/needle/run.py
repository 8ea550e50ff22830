"""The needle benchmark loop: retrieve, locate the needle, grade, record; plan a dry run.

For each question still to grade: its top-k hits come from the retrieval source, the needle's
rank is found, hit@1/hit@5 come from :func:`~rankscope.judge.needle.scoring.retrieval_measures`,
and the grader grades the chunks. Each result is appended to the output as soon as it exists,
so an interruption loses no paid grade; a rerun resumes (see
:mod:`rankscope.judge.needle.output`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from rankscope.judge.config import JudgeSettings
from rankscope.judge.limits import UsageMeter
from rankscope.judge.needle.grading import RetrievalGrader
from rankscope.judge.needle.output import NeedleOutput
from rankscope.judge.needle.questions import NeedleQuestion
from rankscope.judge.needle.retrieval import (
    FunctionRetrieval,
    RetrievalSource,
    Retrieved,
    Retriever,
    needle_rank,
)
from rankscope.judge.needle.scoring import (
    NeedleSummary,
    QuestionResult,
    retrieval_measures,
    summarize,
)
from rankscope.judge.needle.weights import PositionWeights

OnResult = Callable[[int, int, QuestionResult], None]

log = logging.getLogger("rankscope.judge.needle")
#: one ``metric name=value`` line per aggregate of summary.json, at INFO (``rankscope needle``
#: shows them by default: the grading design's acceptance check greps the log for them)
metrics_log = logging.getLogger("rankscope.judge.needle.metrics")


def log_metrics(summary: NeedleSummary) -> None:
    """Log each aggregate of ``summary`` as ``metric name=value`` (the summary.json names)."""
    for name, value in summary.to_json().items():
        if (isinstance(value, int | float) and not isinstance(value, bool)) or value is None:
            metrics_log.info("metric %s=%s", name, "null" if value is None else value)


def _source(retrieve: Retriever | RetrievalSource) -> RetrievalSource:
    if hasattr(retrieve, "retrieve") and hasattr(retrieve, "describe"):
        return retrieve  # type: ignore[return-value]
    return FunctionRetrieval(retrieve, getattr(retrieve, "__qualname__", "function"))  # type: ignore[arg-type]


def run_settings(
    source: RetrievalSource, grader: RetrievalGrader, k: int, weights: PositionWeights
) -> dict[str, Any]:
    """What decides a run's results: resuming is allowed only when all of it is unchanged."""
    return {
        "provider": grader.provider.name,
        "model": grader.provider.model,
        "template": grader.template_hash,
        "max_chunk_chars": grader.max_chunk_chars,
        "k": k,
        "weights": asdict(weights),
        "retrieval": source.describe(),
    }


def _same_question(r: QuestionResult, q: NeedleQuestion) -> bool:
    return (r.question_id, r.question, r.expected_answer) == (q.id, q.question, q.expected_answer)


def _result(
    q: NeedleQuestion,
    got: Retrieved,
    measures: dict[str, float],
    grader: RetrievalGrader,
    weights: PositionWeights,
) -> QuestionResult:
    rank = needle_rank(got.hits, q.needle_ids, q.needle_text, got.parents)
    log.debug("question %s: retrieved %d chunks", q.id, len(got.hits))
    log.debug("question %s: needle rank %s", q.id, rank if rank is not None else "not found")
    graded = grader.grade(q.question, q.expected_answer, [h.text or "" for h in got.hits])
    total = weights.total_score(graded.grade, rank)
    log.debug(
        "question %s: weight %s applied to grade %s: total score %s",
        q.id, weights.weight(rank), graded.grade, total,
    )  # fmt: skip
    return QuestionResult(
        question_id=q.id,
        question=q.question,
        expected_answer=q.expected_answer,
        needle_found=rank is not None,
        rank=rank,
        hit_at_1=measures["hit@1"] > 0,
        hit_at_5=measures["hit@5"] > 0,
        llm_grade=graded.grade,
        llm_reasoning=graded.reasoning,
        total_score=total,
        latency_ms=got.latency_ms,
        grading_latency_ms=round(graded.latency_ms, 3),
        retrieved_ids=tuple(h.doc_id for h in got.hits),
        raw_answer=graded.raw_answer,
        raw_grade=graded.raw_grade,
        clamped=graded.clamped,
        grading_error=graded.error,
        input_tokens=graded.input_tokens,
        output_tokens=graded.output_tokens,
        cost_usd=graded.cost_usd,
        cached=graded.cached,
        chunks_cut=graded.chunks_cut,
    )


def run_needle(
    questions: Iterable[NeedleQuestion],
    retrieve: Retriever | RetrievalSource,
    grader: RetrievalGrader,
    *,
    k: int = 5,
    weights: PositionWeights | None = None,
    on_result: OnResult | None = None,
    output: NeedleOutput | None = None,
    fresh: bool = False,
    on_resume: Callable[[int], None] | None = None,
    percent: bool = False,
) -> tuple[list[QuestionResult], NeedleSummary]:
    """Retrieve, locate the needle and grade each question; a failed grade is None, not fatal.

    With ``output``, results are appended as they come and an interrupted run into the same
    output is resumed (``on_resume`` hears how many questions were kept); ``fresh`` starts
    over. Returns the results in question order and the summary over all of them (its rates
    as percentages with ``percent``); each aggregate is logged (:func:`log_metrics`).
    """
    weights = weights or PositionWeights()
    source = _source(retrieve)
    qs = list(questions)
    settings = run_settings(source, grader, k, weights) if output is not None else {}
    earlier = output.earlier(settings, fresh=fresh) if output is not None else []
    by_id = {q.id: q for q in qs}
    kept = {
        r.question_id: r
        for r in earlier
        if r.question_id in by_id and _same_question(r, by_id[r.question_id])
    }
    if output is not None:
        output.start(settings, [kept[q.id] for q in qs if q.id in kept])
    if on_resume is not None and kept:
        on_resume(len(kept))
    todo = [q for q in qs if q.id not in kept]
    retrieved = source.retrieve(todo, k)
    measures = retrieval_measures(
        [(q.id, tuple(h.doc_id for h in retrieved[q.id].hits),
          needle_rank(retrieved[q.id].hits, q.needle_ids, q.needle_text, retrieved[q.id].parents))
         for q in todo],
        k,
    )  # fmt: skip
    done: dict[str, QuestionResult] = dict(kept)
    for i, q in enumerate(qs, 1):
        if q.id in kept:
            continue
        r = _result(q, retrieved[q.id], measures[q.id], grader, weights)
        done[q.id] = r
        if output is not None:
            output.append(r)
        if on_result is not None:
            on_result(i, len(qs), r)
    results = [done[q.id] for q in qs]
    summary = summarize(results, k)
    if percent:
        summary = summary.as_percent()
    if output is not None:
        summary = replace(summary, runs=output.runs())
        output.finish(summary)
    log_metrics(summary)
    return results, summary


@dataclass(frozen=True, slots=True)
class NeedlePlan:
    """What a run would pay for: calls and their estimated tokens and cost (a dry run)."""

    questions: int
    already_graded: int  # kept from an interrupted run in the output
    cached: int  # in the --cache
    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    model: str


def plan_needle(
    questions: Sequence[NeedleQuestion],
    retrieve: Retriever | RetrievalSource,
    grader: RetrievalGrader,
    settings: JudgeSettings,
    *,
    k: int = 5,
    weights: PositionWeights | None = None,
    output: NeedleOutput | None = None,
    fresh: bool = False,
) -> NeedlePlan:
    """Count the grading calls a run would make; retrieval runs (it is free), nothing is sent
    and nothing is written."""
    weights = weights or PositionWeights()
    source = _source(retrieve)
    kept: set[str] = set()
    if output is not None:
        by_id = {q.id: q for q in questions}
        for r in output.earlier(run_settings(source, grader, k, weights), fresh=fresh):
            if r.question_id in by_id and _same_question(r, by_id[r.question_id]):
                kept.add(r.question_id)
    todo = [q for q in questions if q.id not in kept]
    retrieved = source.retrieve(todo, k)
    cached = calls = tokens_in = 0
    for q in todo:
        chunks = [h.text or "" for h in retrieved[q.id].hits]
        if grader.is_cached(q.question, q.expected_answer, chunks):
            cached += 1
            continue
        calls += 1
        tokens_in += grader.estimated_input_tokens(q.question, q.expected_answer, chunks)
    tokens_out = calls * settings.expected_output_tokens
    cost = UsageMeter(settings).cost_of(grader.provider.model, tokens_in, tokens_out)
    return NeedlePlan(
        len(questions), len(kept), cached, calls, tokens_in, tokens_out, cost, grader.provider.model
    )


__all__ = ["NeedlePlan", "log_metrics", "plan_needle", "run_needle", "run_settings"]
