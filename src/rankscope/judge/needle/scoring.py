"""Per-question results and the summary: retrieval measures from ``rankscope.evaluate``.

hit@1, hit@5, hit@k (accuracy: the needle in the top k) and MRR are computed by the metrics
kernels, from what each result records: the retrieved ids and the needle's rank (the first hit
that is the needle is the one relevant document of its question). So the summary can be
recomputed from ``results.jsonl`` alone. Grades, totals and pass rates are plain averages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from rankscope.errors import InputError

#: the relevant "document" of a question whose needle was not retrieved: never in a run
_NOT_RETRIEVED = "\u2205 needle not retrieved"


@dataclass(frozen=True, slots=True)
class QuestionResult:
    """One question's outcome: where the needle ranked, the grader's answer and grade, the
    score that combines them, latencies and tokens."""

    question_id: str
    question: str
    expected_answer: str
    needle_found: bool
    rank: int | None
    hit_at_1: bool
    hit_at_5: bool
    llm_grade: int | None
    llm_reasoning: str | None  # None when the grading failed (the error is in grading_error)
    total_score: float | None
    latency_ms: float  # retrieval
    grading_latency_ms: float
    retrieved_ids: tuple[str, ...] = field(default=())
    raw_answer: str = ""  # the grader's answer as received
    raw_grade: float | None = None  # the number it wrote, before rounding and clamping
    clamped: bool = False  # the number lay outside 1-10 and was clamped
    grading_error: str | None = None  # the provider could not answer (nothing paid)
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    cached: bool = False  # the answer came from the --cache (not paid by this output)
    chunks_cut: int = 0  # chunks cut to the prompt's size limit

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["retrieved_ids"] = list(self.retrieved_ids)
        return d

    @classmethod
    def from_json(cls, row: dict[str, Any]) -> QuestionResult:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in row.items() if k in known}
        values["retrieved_ids"] = tuple(str(x) for x in values.get("retrieved_ids") or ())
        return cls(**values)

    @property
    def graded(self) -> bool:
        """The grader answered (with or without a readable grade): nothing left to pay for."""
        return self.grading_error is None


@dataclass(frozen=True, slots=True)
class NeedleSummary:
    """The needle benchmark over all questions: hit rates, MRR, mean grades and pass rates."""

    questions: int
    k: int
    accuracy: float  # needle in the top k (hit@k)
    hit_at_1_rate: float
    hit_at_5_rate: float
    mrr: float
    avg_llm_grade: float | None  # over graded questions
    avg_total_score: float | None
    graded: int
    pass_rate_8: float  # over all questions; ungraded ones do not pass
    pass_rate_7: float
    pass_rate_6_5: float
    clamped: int = 0  # grades written outside 1-10 and clamped
    grading_failed: int = 0  # questions the provider could not grade (rerun to retry them)
    avg_latency_ms: float = 0.0  # retrieval
    avg_grading_latency_ms: float = 0.0
    grading_calls: int = 0  # paid answers, over every run into this output
    cached: int = 0  # answers taken from the cache
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0  # total over every run into this output; None: unpriced
    runs: int = 1  # runs that wrote these results (an interrupted run and its resumptions)
    percent: bool = False  # the rates (RATE_FIELDS) are percentages, not fractions

    def to_json(self) -> dict[str, Any]:
        return {k: round(v, 6) if isinstance(v, float) else v for k, v in asdict(self).items()}

    def as_percent(self) -> NeedleSummary:
        """The same summary with its rates as percentages (``hit_at_1_rate`` 80.0, not 0.8),
        as the grading design wrote them (``rankscope needle --percent``)."""
        if self.percent:
            return self
        rates = {name: round(getattr(self, name) * 100.0, 4) for name in RATE_FIELDS}
        return replace(self, percent=True, **rates)


#: the summary's rates: fractions by default, percentages with ``percent``
RATE_FIELDS = (
    "accuracy",
    "hit_at_1_rate",
    "hit_at_5_rate",
    "pass_rate_8",
    "pass_rate_7",
    "pass_rate_6_5",
)


def retrieval_measures(
    rows: Sequence[tuple[str, Sequence[str], int | None]], k: int
) -> dict[str, dict[str, float]]:
    """``{question_id: {"hit@1", "hit@5", "hit@k", "mrr"}}`` from (id, retrieved ids, needle
    rank) rows, with :func:`rankscope.evaluate` (every question counts; none retrieved is 0)."""
    # numpy, pyarrow: when the answers are scored, not when the command starts
    from rankscope import evaluate
    from rankscope.data import Qrels, Run

    judged: dict[str, dict[str, int]] = {}
    ranked: dict[str, dict[str, float]] = {}
    for qid, ids, rank in rows:
        scores: dict[str, float] = {}
        for i, doc in enumerate(ids[:k]):
            scores.setdefault(doc, float(k - i))  # the retrieval order, as scores
        if scores:
            ranked[qid] = scores
        needle = ids[rank - 1] if rank is not None and rank <= len(ids) else _NOT_RETRIEVED
        judged[qid] = {needle: 1}
    if not judged:
        return {}
    names = list(dict.fromkeys(["hit@1", "hit@5", f"hit@{k}", "mrr"]))
    results = evaluate(
        Qrels.from_dict(judged), Run.from_dict(ranked, name="needle"), names,
        average_over_qrels=True,
    )  # fmt: skip
    per_query = results.per_query()
    return {
        qid: {"hit@1": v["hit@1"], "hit@5": v["hit@5"], "hit@k": v[f"hit@{k}"], "mrr": v["mrr"]}
        for qid, v in per_query.items()
    }


def summarize(results: Sequence[QuestionResult], k: int) -> NeedleSummary:
    """The :class:`NeedleSummary` of ``results``, retrieved at depth ``k``."""
    n = len(results)
    if n == 0:
        raise InputError("no questions to summarize")
    measures = retrieval_measures([(r.question_id, r.retrieved_ids, r.rank) for r in results], k)

    def mean(name: str) -> float:
        return sum(measures[r.question_id][name] for r in results) / n

    grades = [r.llm_grade for r in results if r.llm_grade is not None]
    totals = [r.total_score for r in results if r.total_score is not None]
    paid = [r for r in results if r.graded and not r.cached]
    costs = [r.cost_usd for r in paid]

    def passing(cut: float) -> float:
        return sum(1 for r in results if r.total_score is not None and r.total_score >= cut) / n

    return NeedleSummary(
        questions=n,
        k=k,
        accuracy=mean("hit@k"),
        hit_at_1_rate=mean("hit@1"),
        hit_at_5_rate=mean("hit@5"),
        mrr=mean("mrr"),
        avg_llm_grade=sum(grades) / len(grades) if grades else None,
        avg_total_score=sum(totals) / len(totals) if totals else None,
        graded=len(grades),
        pass_rate_8=passing(8.0),
        pass_rate_7=passing(7.0),
        pass_rate_6_5=passing(6.5),
        clamped=sum(1 for r in results if r.clamped),
        grading_failed=sum(1 for r in results if not r.graded),
        avg_latency_ms=sum(r.latency_ms for r in results) / n,
        avg_grading_latency_ms=sum(r.grading_latency_ms for r in results) / n,
        grading_calls=len(paid),
        cached=sum(1 for r in results if r.cached),
        input_tokens=sum(r.input_tokens for r in paid),
        output_tokens=sum(r.output_tokens for r in paid),
        cost_usd=None if any(c is None for c in costs) else sum(c or 0.0 for c in costs),
    )


__all__ = ["NeedleSummary", "QuestionResult", "retrieval_measures", "summarize"]
