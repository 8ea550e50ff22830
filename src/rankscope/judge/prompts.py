"""Relevance prompt templates and the parser that turns an answer into a 0–3 label.

The default template follows the UMBRELA approach (Upadhyay et al., 2024, after Thomas et al.):
the model considers the intent behind the query, rates how well the passage matches it (M) and
how trustworthy it is (T), and ends with ``##final score: N`` on the 0–3 TREC scale. A user
template is plain text with the placeholders ``{query}``, ``{passage}`` and optionally
``{title}``, ``{query_id}``, ``{doc_id}``; other braces are left alone, so JSON examples in a
template need no escaping.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from rankscope.errors import ConfigError
from rankscope.suite.corpus import read_text

DEFAULT_TEMPLATE = """\
Given a query and a passage, grade how relevant the passage is to the query on an integer \
scale from 0 to 3:
3 = the passage is dedicated to the query and contains the exact answer;
2 = the passage has some answer for the query, but it may be unclear or hidden among \
extraneous information;
1 = the passage seems related to the query but does not answer it;
0 = the passage has nothing to do with the query.

Give 1 when the passage is somewhat related to the topic but not entirely, 2 when it presents \
something important about the whole topic along with other information, and 3 when it refers \
only and entirely to the topic. When none of these fits, give 0.

Query: {query}
Passage: {passage}

Work through these steps:
1. Consider the underlying intent of the search.
2. Measure how well the passage content matches a likely intent of the query (M).
3. Measure how trustworthy the passage is (T).
4. Weigh M and T and decide on a final score (O), an integer from 0 to 3.

Write at most two short sentences of reasoning, then end with a last line in exactly this \
form: ##final score: N"""

PLACEHOLDERS = ("query", "passage", "title", "query_id", "doc_id")


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    """A prompt template and the label scale its answers are parsed on."""

    text: str
    min_label: int = 0
    max_label: int = 3
    source: str = "default (UMBRELA)"
    system: str | None = None

    def __post_init__(self) -> None:
        missing = [p for p in ("query", "passage") if "{" + p + "}" not in self.text]
        if missing:
            raise ConfigError(
                "prompt template lacks placeholder(s) " + ", ".join("{" + m + "}" for m in missing),
                path=None if self.source.startswith("default") else self.source,
                hint="a template must contain {query} and {passage}",
            )
        if self.min_label > self.max_label:
            raise ConfigError(
                "label scale is empty", value=(self.min_label, self.max_label), hint="min <= max"
            )

    @classmethod
    def from_file(cls, path: str | Path, min_label: int = 0, max_label: int = 3) -> PromptTemplate:
        p = Path(path)
        text = read_text(p)  # names the file and line of bytes that are not UTF-8
        return cls(text=text, min_label=min_label, max_label=max_label, source=str(p))

    @property
    def hash(self) -> str:
        """Identity of the prompt for caching: the text, the system prompt and the scale."""
        h = hashlib.sha256()
        for part in (self.text, self.system or "", f"{self.min_label}..{self.max_label}"):
            h.update(part.encode("utf-8"))
            h.update(b"\x00")
        return h.hexdigest()[:16]

    def render(
        self, *, query: str, passage: str, title: str = "", query_id: str = "", doc_id: str = ""
    ) -> str:
        values = {
            "query": query,
            "passage": passage,
            "title": title,
            "query_id": query_id,
            "doc_id": doc_id,
        }
        # One pass over the placeholders so text inside a value is never substituted again.
        pattern = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")
        return pattern.sub(lambda m: values[m.group(1)], self.text)


@dataclass(frozen=True, slots=True)
class ParsedLabel:
    """A label, or None with the reason it could not be read. ``rationale`` is the prose."""

    label: int | None
    reason: str | None
    rationale: str
    method: str | None  # "json", "final-score", "bare" or None


_JSON_KEYS = ("final_score", "score", "relevance", "label", "grade")
_FINAL_RE = re.compile(
    r"#*\s*\**\s*final\s*score\s*\**\s*[:=]\s*\**\s*(-?\d+(?:\.\d+)?)\s*(/\s*\d+)?",
    re.IGNORECASE,
)
_BARE_RE = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(/\s*\d+)?\s*\.?\s*$")


def parse_label(text: str, min_label: int = 0, max_label: int = 3) -> ParsedLabel:
    """Read a label from an answer: JSON, then a ``final score`` line, then a bare number.

    Never guesses: a missing, non-integer, fractional (``8/10``) or out-of-range value gives
    ``label=None`` with the reason.
    """
    stripped = text.strip()
    if not stripped:
        return ParsedLabel(None, "empty answer", "", None)
    for obj in json_objects(stripped):
        for key in _JSON_KEYS:
            if key in obj:
                rationale = str(obj.get("reasoning") or obj.get("rationale") or "")
                return _check(obj[key], None, min_label, max_label, rationale, "json")
    matches = list(_FINAL_RE.finditer(stripped))
    if matches:
        last = matches[-1]
        rationale = stripped[: last.start()].strip()
        return _check(last.group(1), last.group(2), min_label, max_label, rationale, "final-score")
    bare = _BARE_RE.match(stripped)
    if bare:
        return _check(bare.group(1), bare.group(2), min_label, max_label, "", "bare")
    return ParsedLabel(None, "no score found in the answer", stripped, None)


def _check(
    value: object, denominator: str | None, lo: int, hi: int, rationale: str, method: str
) -> ParsedLabel:
    if denominator:
        return ParsedLabel(
            None, f"score given as a fraction ({value}{denominator})", rationale, None
        )
    if isinstance(value, bool):
        return ParsedLabel(None, f"score is not a number ({value!r})", rationale, None)
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return ParsedLabel(None, f"score is not a number ({value!r})", rationale, None)
    if not number.is_integer():
        return ParsedLabel(None, f"score is not an integer ({value})", rationale, None)
    label = int(number)
    if not lo <= label <= hi:
        return ParsedLabel(None, f"score {label} is outside the scale {lo}..{hi}", rationale, None)
    return ParsedLabel(label, None, rationale, method)


def json_objects(text: str) -> list[dict[str, object]]:
    """JSON objects found in the text (a fenced block, the whole text, or any {...} span)."""
    found: list[dict[str, object]] = []
    decoder = json.JSONDecoder()
    i = text.find("{")
    while i != -1:
        try:
            obj, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            i = text.find("{", i + 1)
            continue
        if isinstance(obj, dict):
            found.append(obj)
        i = text.find("{", end)
    return found


__all__ = ["DEFAULT_TEMPLATE", "ParsedLabel", "PromptTemplate", "json_objects", "parse_label"]
