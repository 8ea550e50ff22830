"""The progress line printed per question, as the original design fixed it."""

from __future__ import annotations

from rankscope.judge.needle.scoring import QuestionResult

PASS_MARK = 7.0  # ✓ when the total score is at least this


def progress_line(i: int, n: int, r: QuestionResult, width: int = 60) -> str:
    """``[3/20] ✓ R1 G8 T8.0 (45ms) question…``: ✓ when the total is at least 7.0; the time is
    the retrieval latency; ``R-``/``G-``/``T-`` when there is no rank, grade or total."""
    ok = r.total_score is not None and r.total_score >= PASS_MARK
    rank = f"R{r.rank}" if r.rank is not None else "R-"
    grade = f"G{r.llm_grade}" if r.llm_grade is not None else "G-"
    total = f"T{r.total_score:.1f}" if r.total_score is not None else "T-"
    q = r.question if len(r.question) <= width else r.question[: width - 1] + "…"
    return f"[{i}/{n}] {'✓' if ok else '✗'} {rank} {grade} {total} ({r.latency_ms:.0f}ms) {q}"


__all__ = ["PASS_MARK", "progress_line"]
