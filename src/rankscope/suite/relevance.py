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
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rankscope.data import read_qrels
from rankscope.data.qrels import Qrels
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
        path = doc.fields.get("path") or doc.id
        if any(want in path for want in self.files):
            return True
        if not self.symbols:
            return False
        # Case-insensitive, as the code-search design documents it (`detectcollision`).
        names = [n.casefold() for n in (doc.id, doc.title, *doc.fields.get("symbols", "").split())]
        return any(want.casefold() in name for want in self.symbols for name in names if name)


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

    def resolve(self, docs: Iterable[Document], match_grade: int = 1) -> Qrels:
        """Combine everything into document-level qrels over ``docs`` (read once, and only
        when there are code expectations to match)."""
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


def read_qrels_file(path: Path) -> Qrels:
    """Read graded qrels: TREC (``qid 0 doc grade``) or BEIR TSV (``qid doc score``, header)."""
    if not path.is_file():
        raise ConfigError(
            "qrels file not found",
            path=path,
            hint="paths in a suite are relative to the suite file",
        )
    return read_qrels(path)
