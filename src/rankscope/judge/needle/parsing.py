"""Reading a 1-10 grade from the grader's answer, as the original design fixed it.

JSON ``{"grade": n}`` first, else ``grade: n``, ``n/10``, ``n out of 10`` or a bare number. The
number is rounded and clamped to 1-10 (an answer "11" grades 10); the number as written and
whether it was clamped are kept, so clamped grades can be counted and audited.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rankscope.judge.prompts import json_objects

GRADE_MIN = 1
GRADE_MAX = 10


@dataclass(frozen=True, slots=True)
class ParsedGrade:
    """The grade (1-10, or None when the answer has none), the number as written, whether it
    lay outside 1-10 and was clamped, and the reasoning (or why there is no grade)."""

    grade: int | None
    reasoning: str
    raw_grade: float | None = None
    clamped: bool = False


_GRADE_RES = (
    re.compile(r'"?grade"?\s*[:=]\s*"?(-?\d+(?:\.\d+)?)', re.IGNORECASE),
    re.compile(r"(-?\d+(?:\.\d+)?)\s*(?:/|out\s+of)\s*10\b", re.IGNORECASE),
    re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*\.?\s*$"),
)


def parse_grade(text: str) -> ParsedGrade:
    """The grade in an answer: JSON, else a regex on the text; clamped to 1-10."""
    stripped = text.strip()
    if not stripped:
        return ParsedGrade(None, "empty answer")
    for obj in json_objects(stripped):
        if "grade" in obj:
            value = _number(obj["grade"])
            if value is not None:
                return _graded(value, str(obj.get("reasoning") or ""))
    for pattern in _GRADE_RES:
        m = pattern.search(stripped)
        if m:
            value = _number(m.group(1))
            if value is not None:
                return _graded(value, stripped)
    return ParsedGrade(None, f"no grade found in the answer: {stripped[:200]}")


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if number == number and abs(number) != float("inf") else None


def _graded(value: float, reasoning: str) -> ParsedGrade:
    grade = int(min(GRADE_MAX, max(GRADE_MIN, round(value))))
    return ParsedGrade(grade, reasoning, value, not GRADE_MIN <= value <= GRADE_MAX)


__all__ = ["GRADE_MAX", "GRADE_MIN", "ParsedGrade", "parse_grade"]
