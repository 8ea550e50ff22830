"""The grader: asks an LLM whether retrieved chunks hold what is needed to answer (1-10).

``grade`` never raises: a provider failure (after the provider's own retries) gives a result
without a grade and with ``error`` set, so the benchmark goes on and a resumed run asks again. An
answer without a readable grade is a paid answer: it has no grade and no ``error``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

from rankscope.judge.cache import CachedJudgment, CacheKey, JudgmentCache, text_hash
from rankscope.judge.config import JudgeSettings
from rankscope.judge.limits import estimate_tokens
from rankscope.judge.needle.parsing import parse_grade
from rankscope.judge.needle.prompt import (
    GRADER_PROMPT,
    MAX_CHUNK_CHARS,
    GradingPrompt,
    render_prompt,
    template_hash,
)
from rankscope.judge.providers import Provider, make_provider

log = logging.getLogger("rankscope.judge.needle")


@dataclass(frozen=True, slots=True)
class GradeResult:
    """One grading: the grade (None when there is none), the reasoning, how long it took, and
    what was paid: the raw answer, the number as written, whether it was clamped, tokens, cost.
    ``error`` is set when the provider could not answer (nothing was paid)."""

    grade: int | None
    reasoning: str | None  # None when the provider failed (``error`` says why)
    latency_ms: float
    raw_answer: str = ""
    raw_grade: float | None = None
    clamped: bool = False
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    cached: bool = False
    chunks_cut: int = 0


class RetrievalGrader:
    """Grades retrieved chunks for a question with an LLM; answers are cached only when a
    ``cache`` is given (``rankscope needle --cache``)."""

    def __init__(
        self,
        provider: Provider,
        *,
        template: str = GRADER_PROMPT,
        max_chunk_chars: int = MAX_CHUNK_CHARS,
        cache: JudgmentCache | None = None,
    ) -> None:
        self.provider = provider
        self.template = template
        self.max_chunk_chars = max_chunk_chars
        self.cache = cache

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
        return cls(make_provider(provider, model, settings, base_url=base_url))

    @property
    def template_hash(self) -> str:
        return template_hash(self.template)

    def prompt(self, question: str, expected_answer: str, chunks: Sequence[str]) -> GradingPrompt:
        return render_prompt(self.template, question, expected_answer, chunks, self.max_chunk_chars)

    def key(self, question: str, expected_answer: str, prompt: GradingPrompt) -> CacheKey:
        return CacheKey(
            provider=self.provider.name,
            model=self.provider.model,
            template_hash=self.template_hash,
            query_hash=text_hash(question + "\x00" + expected_answer),
            doc_hash=text_hash(prompt.chunks_block),
        )

    def is_cached(self, question: str, expected_answer: str, chunks: Sequence[str]) -> bool:
        if self.cache is None:
            return False
        return (
            self.key(question, expected_answer, self.prompt(question, expected_answer, chunks))
            in self.cache
        )

    def estimated_input_tokens(
        self, question: str, expected_answer: str, chunks: Sequence[str]
    ) -> int:
        return estimate_tokens(self.prompt(question, expected_answer, chunks).text)

    def grade(self, question: str, expected_answer: str, chunks: Sequence[str]) -> GradeResult:
        started = time.perf_counter()
        prompt = self.prompt(question, expected_answer, chunks)
        key = self.key(question, expected_answer, prompt)
        stored = self.cache.get(key) if self.cache is not None else None
        if stored is None:
            log.debug("grading prompt for %r:\n%s", question, prompt.text)
            try:
                done = self.provider.complete(prompt.text)
            except Exception as e:  # the benchmark goes on without this grade
                ms = (time.perf_counter() - started) * 1000.0
                log.warning("grading failed for %r: %s", question, e)
                return GradeResult(None, None, ms, error=str(e), chunks_cut=prompt.chunks_cut)
            parsed = parse_grade(done.text)
            log.debug("grading answer for %r: %r -> %s", question, done.text, parsed.grade)
            reason = None if parsed.grade is not None else parsed.reasoning
            answer = CachedJudgment.answered(done, parsed.grade, reason, parsed.reasoning)
            if self.cache is not None:
                self.cache.put(key, answer)
        else:
            answer = stored
            parsed = parse_grade(stored.raw_text)  # parsing is deterministic: same grade
        return GradeResult(
            parsed.grade,
            parsed.reasoning,
            (time.perf_counter() - started) * 1000.0,
            raw_answer=answer.raw_text,
            raw_grade=parsed.raw_grade,
            clamped=parsed.clamped,
            input_tokens=answer.input_tokens,
            output_tokens=answer.output_tokens,
            cost_usd=answer.cost_usd,
            cached=stored is not None,
            chunks_cut=prompt.chunks_cut,
        )


__all__ = ["GradeResult", "RetrievalGrader"]
