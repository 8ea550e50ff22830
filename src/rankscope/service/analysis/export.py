"""Export collected records as files rankscope reads: TREC or JSONL qrels and run, or a suite.

Each record is one query, its id the record's id (the same query text collected twice is two
queries: two rankings). The run holds the evaluated ranking (the shown order, first ``cutoff``
distinct documents) scored ``n .. 1``; the qrels hold the record's judgments plus grade 0 for
every other retrieved document. So ``rankscope eval -c qrels.txt run.trec -m set_P -m set_recall
-m set_F -m recip_rank -m map -m ndcg -q`` gives back the stored values (``-c`` scores records
that retrieved nothing, as the service does).

The files are written by :mod:`rankscope.data.writers`; a zip holds ``qrels``, ``run``,
``queries.jsonl`` (text and metadata of each record) and, for ``suite``, ``suite.yaml`` and a
``corpus.jsonl`` of the document ids and names (a ``run_file`` engine answers from ``run.trec``,
so the corpus needs no text).

TREC files separate their fields by whitespace, so a document id that is empty or holds
whitespace cannot be written in one and read back. The ``trec`` and ``suite`` exports leave
out the records with such an id in their run or qrels (the other records still evaluate to
their stored values) and list them in ``skipped.jsonl`` and the ``X-Rankscope-Skipped``
header; the ``jsonl`` export holds every record.
"""

from __future__ import annotations

import io
import json
import tempfile
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from rankscope.data.qrels import Qrels
from rankscope.data.run import Run
from rankscope.data.writers import write_qrels, write_run
from rankscope.online.queries import normalise_query, query_key
from rankscope.service.ingest import measures
from rankscope.service.store.db import Principal
from rankscope.service.store.records import Filters, RecordStore

Format = Literal["trec", "jsonl", "suite"]
Selection = Literal["judged", "heuristic", "provided", "feedback"]
RUN_NAME = "collected"
_SOURCES = {
    "judged": ("provided", "feedback"),
    "heuristic": ("heuristic",),
    "provided": ("provided",),
    "feedback": ("feedback",),
}


#: what separates the fields of a TREC line for rankscope's reader and trec_eval (C isspace)
_TREC_SPACE = frozenset(" \t\n\v\f\r")
#: record ids named in the X-Rankscope-Skipped-Records header (skipped.jsonl has them all)
HEADER_IDS = 50


def trec_word(value: str) -> bool:
    """True when ``value`` can be a field of a TREC line and be read back as itself."""
    return bool(value) and _TREC_SPACE.isdisjoint(value)


@dataclass
class Exported:
    """The records of an export. ``trec``: leave out (into ``skipped``) the records whose run
    or qrels hold a document id a TREC file cannot."""

    trec: bool = False
    qrels: dict[str, dict[str, int]] = field(default_factory=dict)
    run: dict[str, dict[str, float]] = field(default_factory=dict)
    queries: list[dict[str, Any]] = field(default_factory=list)
    documents: dict[str, str | None] = field(default_factory=dict)
    skipped: list[dict[str, Any]] = field(default_factory=list)

    def add(self, row: dict[str, Any], entry: dict[str, Any], qrels: dict[str, int]) -> None:
        """One record: its documents, its shown ranking as the run, ``qrels`` (when any) and
        its ``entry`` in the queries file."""
        qid = entry["id"]
        ranking = measures.shown_ranking(_doc_ids(row), row["cutoff"])
        if self.trec:
            bad = sorted({d for d in (*ranking, *qrels) if not trec_word(d)})
            if bad:
                self.skipped.append(
                    {
                        "id": qid,
                        "query_id": row["query_id"],
                        "document_ids": bad,
                        "reason": "a document id is empty or contains whitespace, which a "
                        "TREC file cannot hold; format=jsonl exports this record",
                    }
                )
                return
        for item in row["ranked_list"]:
            self.documents.setdefault(item["document_id"], item.get("document_name"))
        if qrels:
            self.qrels[qid] = qrels
        if ranking:
            self.run[qid] = measures.run_scores(ranking)
        self.queries.append(entry)


def _doc_ids(row: dict[str, Any]) -> list[str]:
    return [item["document_id"] for item in row["ranked_list"]]


def _query_entry(
    row: dict[str, Any],
    *,
    judgment_source: str,
    threshold: float | None,
    query_key: str | None = None,
) -> dict[str, Any]:
    """A record's line in the queries file (``query_key`` only for click-judged exports)."""
    entry: dict[str, Any] = {"id": str(row["id"]), "text": row["query"]}
    if query_key is not None:
        entry["query_key"] = query_key
    entry.update(
        query_id=row["query_id"],
        user_id=row["user_id"],
        timestamp=row["timestamp"].isoformat(),
        judgment_source=judgment_source,
        threshold=threshold,
        topic_id=row["topic_id"],
        search_type=row["search_type"],
        arm=row["arm"],
    )
    return entry


def collect_rows(
    rows: Iterable[dict[str, Any]], selection: Selection, *, trec: bool = False
) -> Exported:
    wanted = _SOURCES[selection]
    out = Exported(trec=trec)
    for row in rows:
        if row["judgment_source"] not in wanted:
            continue
        entry = _query_entry(
            row, judgment_source=row["judgment_source"], threshold=row["threshold"]
        )
        out.add(row, entry, measures.complete_judgments(row["judgments"], _doc_ids(row)))
    return out


def collect_click_rows(
    rows: Iterable[dict[str, Any]],
    by_query: dict[str, dict[str, int]],
    source: str,
    *,
    trec: bool = False,
) -> Exported:
    """Every record whose normalised query has click grades, judged by them: the qrels hold
    the click grades of its query (documents without a grade stay unjudged, not 0)."""
    out = Exported(trec=trec)
    for row in rows:
        text = normalise_query(row["query"])
        grades = by_query.get(text)
        if not grades:
            continue
        entry = _query_entry(row, judgment_source=source, threshold=None, query_key=query_key(text))
        out.add(row, entry, dict(grades))
    return out


def write_files(data: Exported, folder: Path, format: Format) -> list[Path]:
    """Write the export into ``folder``; returns the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    ext = "jsonl" if format == "jsonl" else "txt"
    qrels_path = folder / f"qrels.{ext}"
    run_path = folder / ("run.jsonl" if format == "jsonl" else "run.trec")
    write_qrels(Qrels.from_dict(data.qrels), qrels_path, "jsonl" if format == "jsonl" else "trec")
    write_run(
        Run.from_dict(data.run, name=RUN_NAME), run_path, "jsonl" if format == "jsonl" else "trec"
    )
    queries_path = folder / "queries.jsonl"
    queries_path.write_text("".join(json.dumps(q) + "\n" for q in data.queries))
    files = [qrels_path, run_path, queries_path]
    if data.skipped:
        skipped = folder / "skipped.jsonl"
        skipped.write_text("".join(json.dumps(q) + "\n" for q in data.skipped))
        files.append(skipped)
    if format == "suite":
        corpus = folder / "corpus.jsonl"
        corpus.write_text(
            "".join(
                json.dumps({"_id": doc, "title": name or "", "text": ""}) + "\n"
                for doc, name in data.documents.items()
            )
        )
        suite = {
            "name": "collected",
            "description": "queries collected by rankscope serve, with their judgments",
            "corpus": {"type": "jsonl", "path": "corpus.jsonl"},
            "queries": {"path": "queries.jsonl"},
            "qrels": qrels_path.name,
            "engines": [
                {"name": RUN_NAME, "engine": "run_file", "options": {"path": run_path.name}}
            ],
        }
        suite_path = folder / "suite.yaml"
        suite_path.write_text(yaml.safe_dump(suite, sort_keys=False))
        files += [corpus, suite_path]
    return files


@dataclass(frozen=True)
class ExportFile:
    """An export as the response sends it: a zip or one file, its media type and headers."""

    body: bytes
    media_type: str
    headers: dict[str, str]


def export_file(
    store: RecordStore,
    principal: Principal,
    filters: Filters,
    format: Format,
    selection: Selection,
    part: Literal["qrels", "run", "queries"] | None,
    clicks: tuple[dict[str, dict[str, int]], str] | None = None,
) -> ExportFile:
    """The export as a zip or one file; ``clicks`` (grades by normalised query, and their
    source such as ``clicks:dbn``) judges every selected record by clicks instead."""
    trec = format != "jsonl"
    if clicks is not None:
        data = collect_click_rows(store.rows(principal, filters), clicks[0], clicks[1], trec=trec)
    else:
        data = collect_rows(store.rows(principal, filters), selection, trec=trec)
    headers = {
        "X-Rankscope-Judgments": clicks[1] if clicks is not None else selection,
        "X-Rankscope-Queries": str(len(data.queries)),
        "X-Rankscope-Skipped": str(len(data.skipped)),
    }
    if data.skipped:
        headers["X-Rankscope-Skipped-Records"] = ",".join(
            q["id"] for q in data.skipped[:HEADER_IDS]
        )
    with tempfile.TemporaryDirectory(prefix="rankscope-export-") as tmp:
        files = write_files(data, Path(tmp), format)
        if part is not None and format != "suite":
            chosen = {"qrels": files[0], "run": files[1], "queries": files[2]}[part]
            media = "application/x-ndjson" if chosen.suffix == ".jsonl" else "text/plain"
            headers["Content-Disposition"] = f'attachment; filename="{chosen.name}"'
            return ExportFile(chosen.read_bytes(), media, headers)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
            for path in files:
                zf.write(path, path.name)
    headers["Content-Disposition"] = f'attachment; filename="rankscope-{format}.zip"'
    return ExportFile(buffer.getvalue(), "application/zip", headers)


__all__ = [
    "HEADER_IDS",
    "ExportFile",
    "Exported",
    "collect_click_rows",
    "collect_rows",
    "export_file",
    "trec_word",
    "write_files",
]
