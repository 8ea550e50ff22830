"""Needle questions: what to ask, the answer expected, and where the answer is (the needle)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from rankscope.errors import FormatError
from rankscope.suite.corpus import iter_jsonl, read_text

log = logging.getLogger("rankscope.judge.needle")


@dataclass(frozen=True, slots=True)
class NeedleQuestion:
    """A RAG question: the answer expected, and the needle (the chunk or document ids, and/or a
    fragment of the text) that holds it."""

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
    records: list[tuple[int | None, Any]]
    if p.suffix.lower() in {".yaml", ".yml"}:
        try:
            data = yaml.safe_load(read_text(p))
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
    if not records:
        raise FormatError("the questions file holds no question", path=p)
    out: list[NeedleQuestion] = []
    seen: set[str] = set()
    for i, (line, rec) in enumerate(records, 1):
        if not isinstance(rec, dict):
            raise FormatError(f"question {i} is not a mapping", path=p, line=line, value=rec)
        q = str(rec.get("question") or "").strip()
        ans = str(rec.get("expected_answer") or rec.get("answer") or "").strip()
        if not q:
            raise FormatError(f"question {i} needs 'question'", path=p, line=line, value=rec)
        if not ans:  # the grading design's default: graded without a reference answer
            where = f"{p}:{line}" if line is not None else str(p)
            log.warning("%s: question %s has no 'expected_answer'; grading against ''", where, i)
        ids = rec.get("needle_ids") or ([rec["needle_id"]] if rec.get("needle_id") else [])
        if isinstance(ids, str):
            ids = [ids]
        text = str(rec.get("needle_text") or "")
        if not ids and not text:
            raise FormatError(
                f"question {i} does not say where its needle is",
                path=p,
                line=line,
                value=rec,
                hint="add 'needle_id' (a chunk or document id) or 'needle_text'",
            )
        qid = str(rec.get("id") or rec.get("question_id") or i)
        if qid in seen:
            raise FormatError("duplicate question id", path=p, line=line, value=qid)
        seen.add(qid)
        out.append(NeedleQuestion(qid, q, ans, tuple(str(x) for x in ids), text))
    return out


__all__ = ["NeedleQuestion", "read_questions"]
