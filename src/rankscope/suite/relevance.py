"""What is relevant for a suite's queries: graded qrels (inline ``judgments:`` or files),
code-search expectations, RAG needles. (LLM labels are :mod:`rankscope.judge`'s; a person's
grades, ``rankscope annotate``'s; click grades, the service's.)

Everything becomes one :class:`~rankscope.data.qrels.Qrels` at document level, so the same
measures apply whatever the suite was written with:

- inline ``judgments: {doc: grade}`` and ``qrels:`` files are graded qrels (inline wins on a clash);
- ``needle_doc_id`` is the document that holds ``expected_answer``: grade 3 unless judged inline;
- ``expected_files`` / ``expected_symbols`` are matched as substrings against every corpus
  document's path (``fields["path"]`` or the id) / symbol names (``fields["symbols"]``, the
  title and the id; case-insensitively), and each match becomes relevant for that query.
  Matching against the whole corpus (not only against what an engine returned) keeps recall's
  denominator the same for every configuration.

With ``settings.relevance: pattern`` a code-search query is judged as the original code-search
benchmark judged it: by expected pattern, not by document (:class:`PatternCredit`). Its qrels
hold one unit per pattern, and each run is rewritten so that a retrieved document counts for the
first pattern it matches that no document ranked above it was counted for; the same recall and
nDCG code then gives found patterns / expected patterns, and DCG over the counted positions
divided by the ideal DCG of ``min(patterns, k)`` positions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rankscope.data import read_qrels
from rankscope.data.qrels import Qrels
from rankscope.data.run import Run
from rankscope.engines.base import Document
from rankscope.errors import ConfigError

NEEDLE_GRADE = 3


@dataclass(frozen=True)
class CodeExpectation:
    """Substrings that mark relevant files or symbols for one query."""

    files: tuple[str, ...] = ()
    symbols: tuple[str, ...] = ()

    def matches(self, doc: Document) -> bool:
        """Whether the document's path or one of its symbol names contains an expected
        substring."""
        return bool(self.matched(doc))

    @property
    def patterns(self) -> int:
        """How many patterns are expected: the files, then the symbols."""
        return len(self.files) + len(self.symbols)

    def matched(self, doc: Document) -> tuple[int, ...]:
        """The indexes of the patterns (files first, then symbols) the document matches."""
        path = doc.fields.get("path") or doc.id
        found = [i for i, want in enumerate(self.files) if want in path]
        if self.symbols:
            # Case-insensitive, as the code-search design documents it (`detectcollision`).
            fields = (doc.id, doc.title, *doc.fields.get("symbols", "").split())
            names = [n.casefold() for n in fields if n]
            found += [
                len(self.files) + i
                for i, want in enumerate(self.symbols)
                if any(want.casefold() in name for name in names)
            ]
        return tuple(found)


def pattern_unit(index: int) -> str:
    """The judged unit that stands for a query's pattern ``index`` under ``relevance: pattern``."""
    return f"pattern:{index}"


@dataclass(frozen=True)
class PatternCredit:
    """Code-search judgments by pattern (``settings.relevance: pattern``): for each query, how
    many patterns it expects and which patterns each matching corpus document matches."""

    #: query id -> number of expected patterns
    expected: Mapping[str, int]
    #: query id -> document id -> indexes of the patterns the document matches
    matches: Mapping[str, Mapping[str, tuple[int, ...]]]
    grade: int = 1

    @classmethod
    def of(
        cls, code: Mapping[str, CodeExpectation], docs: Iterable[Document], grade: int = 1
    ) -> PatternCredit:
        """Match every document of ``docs`` (one pass) against each query's patterns."""
        matches: dict[str, dict[str, tuple[int, ...]]] = {qid: {} for qid in code}
        for doc in docs:
            for qid, expectation in code.items():
                found = expectation.matched(doc)
                if found:
                    matches[qid][doc.id] = found
        return cls({q: e.patterns for q, e in code.items()}, matches, grade)

    def qrels(self) -> dict[str, dict[str, int]]:
        """One relevant unit per expected pattern of each query."""
        return {
            qid: {pattern_unit(i): self.grade for i in range(n)} for qid, n in self.expected.items()
        }

    def credit(self, run: Run) -> Run:
        """``run`` with each code-search query's documents rewritten into pattern units, in
        trec_eval's ranking order: a document becomes the unit of the first pattern it matches
        that is not yet counted; any other document keeps its id (not judged, so not
        relevant). Scores become ``-rank`` so that the order stays as credited. Queries without
        patterns are left as they are."""
        rows: dict[str, dict[str, float]] = {}
        for qid, doc, rank, score in run:
            row = rows.setdefault(qid, {})
            matches = self.matches.get(qid)
            if matches is None:
                row[doc] = score
                continue
            counted = row.keys()
            unit = next(
                (pattern_unit(i) for i in matches.get(doc, ()) if pattern_unit(i) not in counted),
                None,
            )
            if unit is None:
                # a document id that looks like a unit must not pass for one
                unit = doc if not doc.startswith("pattern:") else f"document:{doc}"
            row[unit] = float(-rank)
        return Run.from_dict(rows, name=run.name)


@dataclass
class JudgmentSet:
    """Judgments gathered from a suite before the corpus is known."""

    graded: dict[str, dict[str, int]] = field(default_factory=dict)
    inline: dict[str, dict[str, int]] = field(default_factory=dict)
    needles: dict[str, str] = field(default_factory=dict)
    answers: dict[str, str] = field(default_factory=dict)
    code: dict[str, CodeExpectation] = field(default_factory=dict)

    def any(self) -> bool:
        """Whether the suite itself judges any query (inline, needles, code expectations)."""
        return bool(self.graded or self.inline or self.needles or self.code)

    def resolve(
        self, docs: Iterable[Document], match_grade: int = 1, by_pattern: bool = False
    ) -> Qrels:
        """Combine everything into document-level qrels over ``docs`` (read once, and only
        when there are code expectations to match). ``by_pattern``: code-search queries are
        judged by pattern units instead (:meth:`PatternCredit.qrels`), and ``docs`` is not
        read."""
        if by_pattern:
            return self._by_pattern(match_grade)
        merged: dict[str, dict[str, int]] = {q: dict(j) for q, j in self.graded.items()}
        for qid in self.code:
            merged.setdefault(qid, {})
        for doc in docs if self.code else ():
            for qid, expectation in self.code.items():
                if expectation.matches(doc):
                    row = merged[qid]
                    row[doc.id] = max(row.get(doc.id, 0), match_grade)
        for qid, doc_id in self.needles.items():
            row = merged.setdefault(qid, {})
            row[doc_id] = max(row.get(doc_id, 0), NEEDLE_GRADE)
        for qid, judged in self.inline.items():
            merged.setdefault(qid, {}).update(judged)
        return Qrels.from_dict({q: j for q, j in merged.items() if j}, source="suite")

    def _by_pattern(self, grade: int) -> Qrels:
        both = sorted(set(self.code) & (set(self.graded) | set(self.inline) | set(self.needles)))
        if both:
            raise ConfigError(
                f"query {both[0]!r} has expected files or symbols and also other judgments; "
                "with settings.relevance: pattern a code-search query is judged by its "
                "patterns alone",
                value=both[0],
                hint="drop the query's judgments, needle or qrels lines, or use "
                "relevance: document",
            )
        merged = {q: dict(j) for q, j in self.graded.items()}
        for qid, doc_id in self.needles.items():
            row = merged.setdefault(qid, {})
            row[doc_id] = max(row.get(doc_id, 0), NEEDLE_GRADE)
        for qid, judged in self.inline.items():
            merged.setdefault(qid, {}).update(judged)
        merged.update(
            PatternCredit({q: e.patterns for q, e in self.code.items()}, {}, grade).qrels()
        )
        return Qrels.from_dict({q: j for q, j in merged.items() if j}, source="suite")


def read_qrels_file(path: Path) -> Qrels:
    """Read graded qrels: TREC (``qid 0 doc grade``) or BEIR TSV (``qid doc score``, header)."""
    if not path.is_file():
        raise ConfigError(
            "qrels file not found",
            path=path,
            hint="paths in a suite are relative to the suite file",
        )
    return read_qrels(path)
