"""Exports of an annotation store: TREC qrels, the CSV ``rankscope qrels import`` reads, and
the full log as JSONL.

One annotator's export holds their current grades. The combined export holds, per pair, the
grade its annotators agree on; a pair they graded differently is left out and listed
(``disagreements="omit"``, the default) or stops the export (``"error"``): resolving it is a
person's call, so rankscope never averages grades. Skipped pairs are not graded and are never
exported as grades.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rankscope.errors import InputError
from rankscope.judge.annotate.store import AnnotationStore
from rankscope.judge.io import PathLike, write_qrels_trec
from rankscope.util.csvcells import csv_table
from rankscope.util.files import atomic_write_text

ExportFormat = Literal["qrels", "csv", "jsonl"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("qrels", "csv", "jsonl")
Resolution = Literal["omit", "error"]
CSV_COLUMNS = ("query_id", "doc_id", "grade", "annotators", "note", "query", "title", "judged_at")


@dataclass(frozen=True, slots=True)
class ExportRow:
    query_id: str
    doc_id: str
    grade: int
    annotators: tuple[str, ...]
    note: str
    query: str
    title: str
    judged_at: str  # the latest of the grades kept


@dataclass(frozen=True, slots=True)
class ExportResult:
    rows: tuple[ExportRow, ...]
    #: (query_id, doc_id, {annotator: grade}) of pairs left out as graded differently
    disagreements: tuple[tuple[str, str, dict[str, int]], ...]


def export_rows(
    store: AnnotationStore, annotator: str | None = None, *, disagreements: Resolution = "omit"
) -> ExportResult:
    """The graded pairs, in pool order: ``annotator``'s, or everyone's combined."""
    if disagreements not in ("omit", "error"):
        raise InputError("unknown disagreement policy", value=disagreements, hint="omit or error")
    names = [annotator] if annotator is not None else store.annotators()
    answers = {name: store.answers(name) for name in names}
    notes = {name: store.notes(name) for name in names}
    rows: list[ExportRow] = []
    split: list[tuple[str, str, dict[str, int]]] = []
    for pair in store.pairs():
        given = {
            n: a for n in names if (a := answers[n].get(pair.id)) is not None and a.kind == "grade"
        }
        if not given:
            continue
        grades = {n: int(a.grade or 0) for n, a in given.items()}
        if len(set(grades.values())) > 1:
            split.append((pair.query_id, pair.doc_id, grades))
            continue
        note = "; ".join(
            notes[n][pair.id] if annotator is not None else f"{n}: {notes[n][pair.id]}"
            for n in given
            if pair.id in notes[n]
        )
        rows.append(
            ExportRow(
                pair.query_id,
                pair.doc_id,
                next(iter(grades.values())),
                tuple(given),
                note,
                pair.query,
                pair.title,
                max(a.created_at for a in given.values()),
            )
        )
    if split and disagreements == "error":
        shown = "; ".join(f"({q}, {d}): {g}" for q, d, g in split[:10])
        raise InputError(
            f"{len(split)} pair(s) are graded differently by their annotators: {shown}",
            hint="settle them (rankscope annotate agree lists them), export one annotator with "
            "--annotator NAME, or leave them out with --disagreements omit",
        )
    return ExportResult(tuple(rows), tuple(split))


def qrels_text(rows: Sequence[ExportRow]) -> str:
    """TREC qrels (``query_id 0 doc_id grade``), through rankscope's own qrels writer."""
    from rankscope.data import Qrels  # numpy and pyarrow, for this export alone

    data: dict[str, dict[str, int]] = {}
    for r in rows:
        data.setdefault(r.query_id, {})[r.doc_id] = r.grade
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "qrels.txt"
        write_qrels_trec(Qrels.from_dict(data), path)
        return path.read_text(encoding="utf-8")


def csv_text(rows: Sequence[ExportRow]) -> str:
    """The CSV ``rankscope qrels import`` reads (``query_id``, ``doc_id``, ``grade``; the other
    columns are for people)."""
    return csv_table(
        CSV_COLUMNS,
        (
            [r.query_id, r.doc_id, r.grade, ";".join(r.annotators), r.note, r.query, r.title,
             r.judged_at]
            for r in rows
        ),
        lineterminator="\r\n",
    )  # fmt: skip


def log_text(store: AnnotationStore) -> str:
    """Every action of the log, one JSON object per line, with the pair's ids."""
    keys = {p.id: (p.query_id, p.doc_id) for p in store.pairs()}
    lines = []
    for a in store.log():
        q, d = keys[a.pair_id]
        lines.append(
            json.dumps(
                {
                    "id": a.id,
                    "annotator": a.annotator,
                    "query_id": q,
                    "doc_id": d,
                    "kind": a.kind,
                    "grade": a.grade,
                    "note": a.note,
                    "undoes": a.undoes,
                    "elapsed_ms": a.elapsed_ms,
                    "created_at": a.created_at,
                },
                ensure_ascii=False,
            )
        )
    return "".join(line + "\n" for line in lines)


def export_text(
    store: AnnotationStore,
    fmt: ExportFormat,
    annotator: str | None = None,
    *,
    disagreements: Resolution = "omit",
) -> tuple[str, ExportResult | None]:
    """The export as text, and what it holds (None for the log)."""
    if fmt not in EXPORT_FORMATS:
        raise InputError("unknown export format", value=fmt, hint=", ".join(EXPORT_FORMATS))
    if fmt == "jsonl":
        if annotator is not None:
            raise InputError("the log holds every annotator", hint="drop --annotator with -f jsonl")
        return log_text(store), None
    result = export_rows(store, annotator, disagreements=disagreements)
    text = qrels_text(result.rows) if fmt == "qrels" else csv_text(result.rows)
    return text, result


def write_export(
    store: AnnotationStore,
    path: PathLike,
    fmt: ExportFormat,
    annotator: str | None = None,
    *,
    disagreements: Resolution = "omit",
) -> ExportResult | None:
    """Write the store's judgments (one ``annotator``'s, or all with ``disagreements``
    resolved) to ``path`` as ``fmt``."""
    text, result = export_text(store, fmt, annotator, disagreements=disagreements)
    atomic_write_text(path, text)
    return result


__all__ = [
    "CSV_COLUMNS",
    "EXPORT_FORMATS",
    "ExportFormat",
    "ExportResult",
    "ExportRow",
    "Resolution",
    "csv_text",
    "export_rows",
    "export_text",
    "log_text",
    "qrels_text",
    "write_export",
]
