"""The needle benchmark: retrieve top-k chunks per question, find the needle, grade with an LLM.

Each question names the chunk or document that holds its answer (the needle, by id and/or by a
text fragment) and the expected answer. Retrieval gives the needle's rank (1-based, None when
absent from the top k); :class:`RetrievalGrader` asks an LLM whether the chunks contain what is
needed to answer (1–10); the total score weighs the grade by where the needle was found.

Accuracy is the fraction of questions whose needle is in the top k.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rankscope.engines.base import Hit
from rankscope.errors import FormatError, InputError
from rankscope.judge.config import JudgeSettings
from rankscope.judge.io import iter_jsonl
from rankscope.judge.providers import Provider

log = logging.getLogger("rankscope.judge.needle")

GRADER_PROMPT = """\
You are grading a retrieval system. Given a question, the answer we expect, and the chunks the \
system retrieved, decide whether the chunks contain the information needed to answer the \
question. Judge only the chunks, not your own knowledge.

Grade on a 1-10 scale:
10 = the chunks contain the complete answer;
8-9 = the chunks contain the core of the answer;
6-7 = the chunks contain most of the answer;
4-5 = the chunks contain part of the answer;
2-3 = the chunks are only tangentially related;
1 = the chunks are irrelevant.

Question: {question}
Expected answer: {expected_answer}

Retrieved chunks:
{chunks}

Answer with JSON only: {{"grade": <integer 1-10>, "reasoning": "<one or two sentences>"}}"""


@dataclass(frozen=True, slots=True)
class GradeResult:
    grade: int | None
    reasoning: str
    latency_ms: float


_GRADE_RES = (
    re.compile(r'"?grade"?\s*[:=]\s*"?(-?\d+(?:\.\d+)?)', re.IGNORECASE),
    re.compile(r"(-?\d+(?:\.\d+)?)\s*(?:/|out\s+of)\s*10\b", re.IGNORECASE),
    re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*\.?\s*$"),
)


def parse_grade(text: str) -> tuple[int | None, str]:
    """(grade clamped to 1–10 or None, reasoning) from JSON, else a regex on the text."""
    stripped = text.strip()
    if not stripped:
        return None, "empty answer"
    decoder = json.JSONDecoder()
    i = stripped.find("{")
    while i != -1:
        try:
            obj, end = decoder.raw_decode(stripped, i)
        except json.JSONDecodeError:
            i = stripped.find("{", i + 1)
            continue
        if isinstance(obj, dict) and "grade" in obj:
            value = _number(obj["grade"])
            reasoning = str(obj.get("reasoning") or "")
            if value is not None:
                return _clamp(value), reasoning
        i = stripped.find("{", end)
    for pattern in _GRADE_RES:
        m = pattern.search(stripped)
        if m:
            value = _number(m.group(1))
            if value is not None:
                return _clamp(value), stripped
    return None, f"no grade found in the answer: {stripped[:200]}"


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if number == number else None  # NaN is no grade


def _clamp(value: float) -> int:
    return int(min(10, max(1, round(value))))


class RetrievalGrader:
    """Grades retrieved chunks for a question with an LLM. ``grade`` never raises."""

    def __init__(
        self, provider: Provider, *, template: str = GRADER_PROMPT, max_chunk_chars: int = 4000
    ) -> None:
        self.provider = provider
        self.template = template
        self.max_chunk_chars = max_chunk_chars

    @classmethod
    def create(
        cls,
        provider: str = "anthropic",
        model: str | None = None,
        settings: JudgeSettings | None = None,
        *,
        base_url: str | None = None,
    ) -> RetrievalGrader:
        """A grader on a named provider; the default model is the provider's (Sonnet-class)."""
        from rankscope.judge.providers import make_provider

        return cls(make_provider(provider, model, settings, base_url=base_url))

    def prompt(self, question: str, expected_answer: str, chunks: Sequence[str]) -> str:
        body = (
            "\n\n".join(f"[{i}] {c[: self.max_chunk_chars]}" for i, c in enumerate(chunks, 1))
            or "(no chunks were retrieved)"
        )
        return (
            self.template.replace("{question}", question)
            .replace("{expected_answer}", expected_answer)
            .replace("{chunks}", body)
            .replace("{{", "{")
            .replace("}}", "}")
        )

    def grade(self, question: str, expected_answer: str, chunks: Sequence[str]) -> GradeResult:
        started = time.perf_counter()
        prompt = self.prompt(question, expected_answer, chunks)
        log.debug("grading prompt for %r:\n%s", question, prompt)
        try:
            done = self.provider.complete(prompt)
        except Exception as e:  # the benchmark goes on without this grade
            ms = (time.perf_counter() - started) * 1000.0
            log.warning("grading failed for %r: %s", question, e)
            return GradeResult(None, f"grading failed: {e}", ms)
        grade, reasoning = parse_grade(done.text)
        log.debug("grading answer for %r: %r -> %s", question, done.text, grade)
        return GradeResult(grade, reasoning, (time.perf_counter() - started) * 1000.0)


# -- metrics ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PositionWeights:
    """Multiplier of the grade by the needle's rank."""

    rank1: float = 1.0
    rank2_3: float = 0.95
    rank4_5: float = 0.85
    beyond5: float = 0.85  # found at rank 6..k
    not_found: float = 0.6

    def weight(self, rank: int | None) -> float:
        if rank is None:
            return self.not_found
        if rank == 1:
            return self.rank1
        if rank <= 3:
            return self.rank2_3
        if rank <= 5:
            return self.rank4_5
        return self.beyond5


WEIGHT_PRESETS: dict[str, PositionWeights] = {
    "default": PositionWeights(),
    "steep": PositionWeights(rank1=1.0, rank2_3=0.8, rank4_5=0.8, beyond5=0.8, not_found=0.5),
}


class RetrievalMetrics:
    """Per-question needle metrics and the total score."""

    def __init__(self, weights: PositionWeights | None = None) -> None:
        self.weights = weights or PositionWeights()

    @staticmethod
    def needle_rank(hits: Sequence[Hit], needle_ids: Sequence[str], needle_text: str) -> int | None:
        """1-based rank of the first hit that is the needle, or None when absent."""
        ids = set(needle_ids)
        fragment = _norm(needle_text) if needle_text else ""
        for rank, hit in enumerate(hits, 1):
            parent = hit.doc_id.rsplit("#", 1)[0] if "#" in hit.doc_id else hit.doc_id
            if ids and (hit.doc_id in ids or parent in ids):
                return rank
            if fragment and hit.text and fragment in _norm(hit.text):
                return rank
        return None

    def total_score(self, grade: int | None, rank: int | None) -> float | None:
        if grade is None:
            return None
        return round(grade * self.weights.weight(rank), 4)

    @staticmethod
    def reciprocal_rank(rank: int | None) -> float:
        return 0.0 if rank is None else 1.0 / rank


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


# -- questions and the benchmark --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NeedleQuestion:
    id: str
    question: str
    expected_answer: str
    needle_ids: tuple[str, ...] = ()
    needle_text: str = ""


def read_questions(path: str | Path) -> list[NeedleQuestion]:
    """Questions from YAML (a list, or ``{questions: [...]}``) or JSONL.

    Fields: ``id``, ``question``, ``expected_answer``, and the needle as ``needle_id`` /
    ``needle_ids`` (chunk or document ids) and/or ``needle_text`` (a fragment of its text).
    """
    p = Path(path)
    records: list[tuple[int | None, dict[str, Any]]]
    if p.suffix.lower() in {".yaml", ".yml"}:
        try:
            data = yaml.safe_load(p.read_text(encoding="utf-8"))
        except OSError as e:
            raise InputError(f"cannot read questions: {e.strerror}", path=p) from None
        except yaml.YAMLError as e:
            raise FormatError(f"invalid YAML: {e}", path=p) from None
        if isinstance(data, dict):
            data = data.get("questions")
        if not isinstance(data, list):
            raise FormatError(
                "a questions YAML file is a list of questions (or has a 'questions' list)", path=p
            )
        records = [(None, r) for r in data]
    else:
        records = [(n, r) for n, r in iter_jsonl(p)]
    out: list[NeedleQuestion] = []
    seen: set[str] = set()
    for i, (line, rec) in enumerate(records, 1):
        where = {"path": p, "line": line}
        if not isinstance(rec, dict):
            raise FormatError(f"question {i} is not a mapping", value=rec, **where)  # type: ignore[arg-type]
        q = str(rec.get("question") or "").strip()
        ans = str(rec.get("expected_answer") or rec.get("answer") or "").strip()
        if not q or not ans:
            raise FormatError(
                f"question {i} needs 'question' and 'expected_answer'",
                value=rec,
                **where,  # type: ignore[arg-type]
            )
        ids = rec.get("needle_ids") or ([rec["needle_id"]] if rec.get("needle_id") else [])
        if isinstance(ids, str):
            ids = [ids]
        text = str(rec.get("needle_text") or "")
        if not ids and not text:
            raise FormatError(
                f"question {i} does not say where its needle is",
                value=rec,
                hint="add 'needle_id' (a chunk or document id) or 'needle_text'",
                **where,  # type: ignore[arg-type]
            )
        qid = str(rec.get("id") or rec.get("question_id") or i)
        if qid in seen:
            raise FormatError("duplicate question id", value=qid, **where)  # type: ignore[arg-type]
        seen.add(qid)
        out.append(NeedleQuestion(qid, q, ans, tuple(str(x) for x in ids), text))
    return out


@dataclass(frozen=True, slots=True)
class QuestionResult:
    question_id: str
    question: str
    expected_answer: str
    needle_found: bool
    rank: int | None
    hit_at_1: bool
    hit_at_5: bool
    llm_grade: int | None
    llm_reasoning: str
    total_score: float | None
    latency_ms: float
    grading_latency_ms: float
    retrieved_ids: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["retrieved_ids"] = list(self.retrieved_ids)
        return d


@dataclass(frozen=True, slots=True)
class NeedleSummary:
    questions: int
    k: int
    accuracy: float  # needle in the top k
    hit_at_1_rate: float
    hit_at_5_rate: float
    mrr: float
    avg_llm_grade: float | None  # over graded questions
    avg_total_score: float | None
    graded: int
    pass_rate_8: float  # over all questions; ungraded ones do not pass
    pass_rate_7: float
    pass_rate_6_5: float

    def to_json(self) -> dict[str, Any]:
        return {k: round(v, 6) if isinstance(v, float) else v for k, v in asdict(self).items()}


def summarize(results: Sequence[QuestionResult], k: int) -> NeedleSummary:
    n = len(results)
    if n == 0:
        raise InputError("no questions to summarize")
    grades = [r.llm_grade for r in results if r.llm_grade is not None]
    totals = [r.total_score for r in results if r.total_score is not None]

    def passing(cut: float) -> float:
        return sum(1 for r in results if r.total_score is not None and r.total_score >= cut) / n

    return NeedleSummary(
        questions=n,
        k=k,
        accuracy=sum(r.needle_found for r in results) / n,
        hit_at_1_rate=sum(r.hit_at_1 for r in results) / n,
        hit_at_5_rate=sum(r.hit_at_5 for r in results) / n,
        mrr=sum(RetrievalMetrics.reciprocal_rank(r.rank) for r in results) / n,
        avg_llm_grade=sum(grades) / len(grades) if grades else None,
        avg_total_score=sum(totals) / len(totals) if totals else None,
        graded=len(grades),
        pass_rate_8=passing(8.0),
        pass_rate_7=passing(7.0),
        pass_rate_6_5=passing(6.5),
    )


Retriever = Callable[[str, int], Sequence[Hit]]


def progress_line(i: int, n: int, r: QuestionResult, width: int = 60) -> str:
    """``[3/20] ✓ R1 G8 T8.0 (45ms) question…`` (✓ when the total is at least 7.0)."""
    ok = r.total_score is not None and r.total_score >= 7.0
    rank = f"R{r.rank}" if r.rank is not None else "R-"
    grade = f"G{r.llm_grade}" if r.llm_grade is not None else "G-"
    total = f"T{r.total_score:.1f}" if r.total_score is not None else "T-"
    q = r.question if len(r.question) <= width else r.question[: width - 1] + "…"
    return f"[{i}/{n}] {'✓' if ok else '✗'} {rank} {grade} {total} ({r.latency_ms:.0f}ms) {q}"


def run_needle(
    questions: Iterable[NeedleQuestion],
    retrieve: Retriever,
    grader: RetrievalGrader,
    *,
    k: int = 5,
    metrics: RetrievalMetrics | None = None,
    on_result: Callable[[int, int, QuestionResult], None] | None = None,
) -> tuple[list[QuestionResult], NeedleSummary]:
    """Retrieve, locate the needle and grade each question; a failed grade is None, not fatal."""
    metrics = metrics or RetrievalMetrics()
    qs = list(questions)
    results: list[QuestionResult] = []
    for i, q in enumerate(qs, 1):
        started = time.perf_counter()
        hits = list(retrieve(q.question, k))[:k]
        latency = (time.perf_counter() - started) * 1000.0
        rank = metrics.needle_rank(hits, q.needle_ids, q.needle_text)
        graded = grader.grade(q.question, q.expected_answer, [h.text or "" for h in hits])
        r = QuestionResult(
            question_id=q.id,
            question=q.question,
            expected_answer=q.expected_answer,
            needle_found=rank is not None,
            rank=rank,
            hit_at_1=rank == 1,
            hit_at_5=rank is not None and rank <= 5,
            llm_grade=graded.grade,
            llm_reasoning=graded.reasoning,
            total_score=metrics.total_score(graded.grade, rank),
            latency_ms=round(latency, 3),
            grading_latency_ms=round(graded.latency_ms, 3),
            retrieved_ids=tuple(h.doc_id for h in hits),
        )
        results.append(r)
        if on_result is not None:
            on_result(i, len(qs), r)
    return results, summarize(results, k)


def load_pipeline(spec: str) -> Retriever:
    """A user retriever ``module:function`` taking ``(question, k)``.

    It may return :class:`Hit` values, strings (chunk texts) or mappings with ``id``/``doc_id``
    and ``text``.
    """
    import importlib

    module_name, sep, func_name = spec.partition(":")
    if not sep or not module_name or not func_name:
        raise InputError(
            "a pipeline is given as module:function", value=spec, hint="e.g. mypkg.rag:retrieve"
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise InputError(f"cannot import pipeline module: {e}", value=spec) from None
    func = getattr(module, func_name, None)
    if not callable(func):
        raise InputError(f"{module_name} has no function {func_name!r}", value=spec)

    def retrieve(question: str, k: int) -> list[Hit]:
        out: list[Hit] = []
        for n, item in enumerate(func(question, k), 1):
            if isinstance(item, Hit):
                out.append(item)
            elif isinstance(item, str):
                out.append(Hit(doc_id=f"#{n}", score=float(-n), text=item))
            elif isinstance(item, dict):
                did = str(item.get("doc_id") or item.get("id") or f"#{n}")
                out.append(Hit(did, float(item.get("score", -n)), str(item.get("text") or "")))
            else:
                raise InputError(
                    "pipeline results must be Hit values, strings or mappings",
                    value=type(item).__name__,
                )
        return out

    return retrieve


__all__ = [
    "GRADER_PROMPT",
    "WEIGHT_PRESETS",
    "GradeResult",
    "NeedleQuestion",
    "NeedleSummary",
    "PositionWeights",
    "QuestionResult",
    "RetrievalGrader",
    "RetrievalMetrics",
    "load_pipeline",
    "parse_grade",
    "progress_line",
    "read_questions",
    "run_needle",
    "summarize",
]
