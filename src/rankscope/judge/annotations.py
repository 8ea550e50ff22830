"""Reviewed annotations back into qrels: validation by line and merging under a policy.

Annotators fill the ``grade`` column of a pool file (JSONL, CSV or YAML). Rows left blank are
skipped (not yet annotated). Every other row must name a (query, doc) pair of the pool and an
integer grade within the scale; all bad rows are reported together, each with its line. The
result can be merged into existing qrels: ``prefer-human`` (the new annotation wins),
``prefer-existing`` (the old grade stays) or ``error`` (any differing grade stops the import).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rankscope.data import Qrels
from rankscope.errors import InputError
from rankscope.judge.io import PathLike
from rankscope.judge.pool import Pool, read_records

Policy = Literal["prefer-human", "prefer-existing", "error"]
POLICIES: tuple[Policy, ...] = ("prefer-human", "prefer-existing", "error")
_GRADE_KEYS = ("grade", "label", "relevance")
_MAX_LISTED = 20


@dataclass(frozen=True, slots=True)
class Conflict:
    query_id: str
    doc_id: str
    existing: int
    human: int
    kept: int


@dataclass(frozen=True, slots=True)
class ImportResult:
    qrels: Qrels
    annotated: int  # rows with a grade
    blank: int  # rows without a grade (skipped)
    added: int  # pairs new to the existing qrels
    conflicts: tuple[Conflict, ...]
    unchanged: int  # pairs where both agree


def read_annotations(
    path: PathLike, pool: Pool | None = None, *, min_grade: int = 0, max_grade: int = 3
) -> tuple[dict[tuple[str, str], int], int]:
    """Graded pairs of an annotation file and the number of blank rows.

    Raises one InputError listing every invalid row (file:line, the value and the reason).
    """
    p = Path(path)
    graded: dict[tuple[str, str], int] = {}
    first_line: dict[tuple[str, str], int] = {}
    problems: list[tuple[int, str]] = []
    blank = 0
    pool_queries = set(pool.query_ids) if pool is not None else set()
    for line, rec in read_records(p):
        qid = _text(rec.get("query_id"))
        did = _text(rec.get("doc_id"))
        raw = next((rec[k] for k in _GRADE_KEYS if k in rec), None)
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            blank += 1
            continue
        if not qid or not did:
            problems.append((line, "missing query_id or doc_id"))
            continue
        if pool is not None and (qid, did) not in pool:
            if qid not in pool_queries:
                problems.append((line, f"unknown query id {qid!r} (not in the pool)"))
            else:
                problems.append(
                    (line, f"unknown doc id {did!r} for query {qid!r} (not in the pool)")
                )
            continue
        grade = _grade(raw)
        if grade is None:
            problems.append(
                (line, f"grade {raw!r} is not a whole number (2 and 2.0 are read as 2)")
            )
            continue
        if not min_grade <= grade <= max_grade:
            problems.append((line, f"grade {grade} is outside the scale {min_grade}..{max_grade}"))
            continue
        key = (qid, did)
        if key in graded and graded[key] != grade:
            problems.append(
                (line, f"pair ({qid}, {did}) graded {graded[key]} on line {first_line[key]} "
                 f"and {grade} here")
            )  # fmt: skip
            continue
        graded[key] = grade
        first_line.setdefault(key, line)
    if problems:
        listed = "\n".join(f"  {p}:{line}: {why}" for line, why in problems[:_MAX_LISTED])
        more = len(problems) - _MAX_LISTED
        if more > 0:
            listed += f"\n  ... and {more} more"
        raise InputError(
            f"{len(problems)} invalid annotation row(s); fix them (grades are integers "
            f"{min_grade}..{max_grade}, ids must come from the pool) and import again:\n{listed}",
            path=p,
        )
    return graded, blank


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


def _grade(raw: Any) -> int | None:
    """An integer grade; integral numbers written as floats (``2.0``, as spreadsheets export
    them) are accepted, anything else (``2.5``, ``high``, ``nan``) is None."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    text = str(raw).strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return None
    return int(number) if number.is_integer() else None  # NaN and inf are not integers


def merge_qrels(
    existing: Qrels | None, human: dict[tuple[str, str], int], policy: Policy = "prefer-human"
) -> tuple[Qrels, int, tuple[Conflict, ...], int]:
    """(merged qrels, added, conflicts, unchanged) under ``policy``."""
    if policy not in POLICIES:
        raise InputError("unknown merge policy", value=policy, hint="use " + ", ".join(POLICIES))
    data = existing.to_dict() if existing is not None else {}
    conflicts: list[Conflict] = []
    added = unchanged = 0
    for (q, d), g in sorted(human.items()):
        old = data.get(q, {}).get(d)
        if old is None:
            data.setdefault(q, {})[d] = g
            added += 1
        elif old == g:
            unchanged += 1
        else:
            kept = g if policy == "prefer-human" else old
            conflicts.append(Conflict(q, d, old, g, kept))
            data[q][d] = kept
    if conflicts and policy == "error":
        shown = "; ".join(
            f"({c.query_id}, {c.doc_id}): existing {c.existing}, annotated {c.human}"
            for c in conflicts[:10]
        )
        raise InputError(
            f"{len(conflicts)} annotation(s) conflict with the existing qrels: {shown}",
            hint="choose --policy prefer-human or prefer-existing, or fix the annotations",
        )
    return Qrels.from_dict(data), added, tuple(conflicts), unchanged


def import_annotations(
    path: PathLike,
    pool: Pool | None = None,
    *,
    existing: Qrels | None = None,
    policy: Policy = "prefer-human",
    min_grade: int = 0,
    max_grade: int = 3,
) -> ImportResult:
    """Read graded pairs from a person's file (CSV or JSONL, against ``pool`` when given) and
    merge them into ``existing`` qrels as ``policy`` says; grades outside ``min_grade`` to
    ``max_grade`` are refused."""
    graded, blank = read_annotations(path, pool, min_grade=min_grade, max_grade=max_grade)
    merged, added, conflicts, unchanged = merge_qrels(existing, graded, policy)
    return ImportResult(merged, len(graded), blank, added, conflicts, unchanged)


__all__ = [
    "POLICIES",
    "Conflict",
    "ImportResult",
    "Policy",
    "import_annotations",
    "merge_qrels",
    "read_annotations",
]
