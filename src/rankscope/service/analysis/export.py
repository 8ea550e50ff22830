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

One export holds at most ``max_export_lines`` qrels and run lines (the service's setting), and
at least one whole record: a record is never split. When the selection holds more, the
response says ``X-Rankscope-Truncated: true`` and ``X-Rankscope-Next-Offset``, where the next
part starts (``offset=``, in the records' order: oldest first, ties by id). Each part is a
complete export of its records, so evaluating the parts one after the other gives what the
whole would.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import zipfile
from collections.abc import Iterable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from rankscope.data.writers import write_qrels, write_run
from rankscope.online.queries import normalise_query, query_key
from rankscope.service.ingest import measures
from rankscope.service.store.db import Principal
from rankscope.service.store.records import Filters, RecordStore

Format = Literal["trec", "jsonl", "suite"]
Selection = Literal["judged", "heuristic", "provided", "feedback"]
RUN_NAME = measures.RUN_NAME
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


#: the columns of a record an export reads
COLUMNS = (
    "id",
    "query",
    "query_id",
    "user_id",
    "timestamp",
    "judgment_source",
    "threshold",
    "topic_id",
    "search_type",
    "arm",
    "cutoff",
    "ranked_list",
    "judgments",
)
#: zlib's fastest level: half the CPU time of its default (6) on an export of 500,000 qrels
#: lines, for a zip 6% (trec) to 16% (jsonl) larger
ZIP_LEVEL = 1
#: records whose qrels and run lines are written together (one Qrels and one Run at a time)
CHUNK_RECORDS = 256
#: ... or fewer, once their judgments and documents reach this many lines
CHUNK_LINES = 50_000


class ExportWriter:
    """The files of an export, written into ``folder`` as the records come, a chunk at a time:
    the memory an export takes does not grow with its records. ``trec``: leave out (into
    ``skipped.jsonl``) the records whose run or qrels hold a document id a TREC file cannot.
    (A suite's corpus keeps the set of document ids written, one entry per distinct id.)

    ``max_lines`` bounds the qrels and run lines of the records taken (its CPU time grows with
    them): :meth:`add` and :meth:`pass_over` refuse a record past it, unless it is the first,
    and set ``truncated``; ``rows`` counts the records taken (the next part's offset)."""

    def __init__(self, folder: Path, format: Format, max_lines: int | None = None) -> None:
        self.folder = folder
        self.format = format
        self.trec = format != "jsonl"
        ext = "jsonl" if format == "jsonl" else "txt"
        self.qrels_path = folder / f"qrels.{ext}"
        self.run_path = folder / ("run.jsonl" if format == "jsonl" else "run.trec")
        self.queries_path = folder / "queries.jsonl"
        self.skipped_path = folder / "skipped.jsonl"
        self.corpus_path = folder / "corpus.jsonl"
        self.queries = 0
        self.skipped = 0
        self.skipped_ids: list[str] = []  # the first HEADER_IDS, for the header
        self.max_lines = max_lines
        self.lines = 0  # of the records taken, written or not
        self.rows = 0
        self.truncated = False
        self._pending: list[measures.Evaluable] = []
        self._pending_lines = 0  # of the pending records, for the next flush
        self._seen: set[str] = set()
        for path in (self.qrels_path, self.run_path, self.queries_path):
            path.write_bytes(b"")
        if format == "suite":
            self.corpus_path.write_bytes(b"")

    def _take(self, lines: int) -> bool:
        """Count a record of ``lines`` lines in this part, unless it would take the part past
        ``max_lines`` and the part already holds one (so every part makes progress)."""
        if self.rows and self.max_lines is not None and self.lines + lines > self.max_lines:
            self.truncated = True
            return False
        self.rows += 1
        self.lines += lines
        return True

    def pass_over(self, row: dict[str, Any]) -> bool:
        """A record read but not exported (not in the selection, or without click grades):
        it counts its documents and judgments against ``max_lines``, since reading it costs
        about as much as writing them. False, and nothing counted, when it does not fit."""
        return self._take(len(row["ranked_list"]) + len(row["judgments"] or ()))

    def add(self, row: dict[str, Any], entry: dict[str, Any], qrels: dict[str, int]) -> bool:
        """One record: its documents, its shown ranking as the run, ``qrels`` (when any) and
        its ``entry`` in the queries file. False, and nothing written, when it does not fit
        in ``max_lines``; a record left out for its ids counts its lines too."""
        qid = entry["id"]
        ranking = measures.shown_ranking(_doc_ids(row), row["cutoff"])
        if not self._take(len(qrels) + len(ranking)):
            return False
        if self.trec:
            bad = sorted({d for d in (*ranking, *qrels) if not trec_word(d)})
            if bad:
                self._skip(
                    {
                        "id": qid,
                        "query_id": row["query_id"],
                        "document_ids": bad,
                        "reason": "a document id is empty or contains whitespace, which a "
                        "TREC file cannot hold; format=jsonl exports this record",
                    }
                )
                return True
        if self.format == "suite":
            self._corpus(row["ranked_list"])
        self._pending.append(measures.Evaluable(qid, ranking, qrels))
        _append(self.queries_path, json.dumps(entry) + "\n")
        self.queries += 1
        self._pending_lines += len(qrels) + len(ranking) + 1
        if len(self._pending) >= CHUNK_RECORDS or self._pending_lines >= CHUNK_LINES:
            self._flush()
        return True

    def _skip(self, item: dict[str, Any]) -> None:
        _append(self.skipped_path, json.dumps(item) + "\n")
        self.skipped += 1
        if len(self.skipped_ids) < HEADER_IDS:
            self.skipped_ids.append(item["id"])

    def _corpus(self, ranked_list: list[dict[str, Any]]) -> None:
        lines = []
        for item in ranked_list:
            doc = item["document_id"]
            if doc not in self._seen:
                self._seen.add(doc)
                name = item.get("document_name")
                lines.append(json.dumps({"_id": doc, "title": name or "", "text": ""}) + "\n")
        if lines:
            _append(self.corpus_path, "".join(lines))

    def _flush(self) -> None:
        """The pending records' qrels and run lines, written by rankscope.data.writers. The
        Qrels and Run are built as the write path builds them to score the records, in the
        order ``from_dict`` gives: the stored judgments were checked then, and
        ``Qrels.from_dict`` checking 500,000 of them again took 0.24 s of CPU (0.10 s so)."""
        kind = "jsonl" if self.format == "jsonl" else "trec"
        pending = self._pending
        if any(item.judgments for item in pending):
            part = self.folder / f"part-qrels.{kind}"
            write_qrels(measures.qrels_of(pending), part, kind)
            _append_file(self.qrels_path, part)
        if any(item.ranking for item in pending):
            part = self.folder / f"part-run.{kind}"
            write_run(measures.run_of(pending), part, kind)
            _append_file(self.run_path, part)
        self._pending, self._pending_lines = [], 0

    def close(self) -> list[Path]:
        """Write what is pending and the suite's file; the files written, in their order."""
        self._flush()
        files = [self.qrels_path, self.run_path, self.queries_path]
        if self.skipped:
            files.append(self.skipped_path)
        if self.format == "suite":
            suite = {
                "name": "collected",
                "description": "queries collected by rankscope serve, with their judgments",
                "corpus": {"type": "jsonl", "path": "corpus.jsonl"},
                "queries": {"path": "queries.jsonl"},
                "qrels": self.qrels_path.name,
                "engines": [
                    {
                        "name": RUN_NAME,
                        "engine": "run_file",
                        "options": {"path": self.run_path.name},
                    }
                ],
            }
            suite_path = self.folder / "suite.yaml"
            suite_path.write_text(yaml.safe_dump(suite, sort_keys=False))
            files += [self.corpus_path, suite_path]
        return files


def _append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(text)


def _append_file(path: Path, part: Path) -> None:
    with path.open("ab") as out, part.open("rb") as src:
        shutil.copyfileobj(src, out)
    part.unlink()


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


def collect_rows(rows: Iterable[dict[str, Any]], selection: Selection, out: ExportWriter) -> None:
    """The records of ``selection`` among ``rows``, until ``out`` is full."""
    wanted = _SOURCES[selection]
    for row in rows:
        if row["judgment_source"] not in wanted:
            if not out.pass_over(row):
                return
            continue
        entry = _query_entry(
            row, judgment_source=row["judgment_source"], threshold=row["threshold"]
        )
        if not out.add(row, entry, measures.complete_judgments(row["judgments"], _doc_ids(row))):
            return


def collect_click_rows(
    rows: Iterable[dict[str, Any]],
    by_query: dict[str, dict[str, int]],
    source: str,
    out: ExportWriter,
) -> None:
    """Every record whose normalised query has click grades, judged by them: the qrels hold
    the click grades of its query (documents without a grade stay unjudged, not 0); until
    ``out`` is full."""
    for row in rows:
        text = normalise_query(row["query"])
        grades = by_query.get(text)
        if not grades:
            if not out.pass_over(row):
                return
            continue
        entry = _query_entry(row, judgment_source=source, threshold=None, query_key=query_key(text))
        if not out.add(row, entry, dict(grades)):
            return


@dataclass(frozen=True)
class ExportFile:
    """An export as the response sends it: a zip or one file on disk (in ``folder``, to be
    removed once sent: :meth:`remove`), its media type and headers."""

    path: Path
    media_type: str
    headers: dict[str, str]
    folder: Path

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def export_file(
    store: RecordStore,
    principal: Principal,
    filters: Filters,
    format: Format,
    selection: Selection,
    part: Literal["qrels", "run", "queries"] | None,
    clicks: tuple[dict[str, dict[str, int]], str] | None = None,
    *,
    max_lines: int | None = None,
    offset: int = 0,
) -> ExportFile:
    """The export as a zip or one file on disk; ``clicks`` (grades by normalised query, and
    their source such as ``clicks:dbn``) judges every selected record by clicks instead. The
    records stream from the database into the files, and the zip is written to disk: memory
    stays flat in the number of records. It starts at the ``offset``-th record of the
    selection's rows and ends before the record that would take it past ``max_lines`` qrels
    and run lines (``X-Rankscope-Truncated``, ``X-Rankscope-Next-Offset``)."""
    folder = Path(tempfile.mkdtemp(prefix="rankscope-export-"))
    try:
        (folder / "files").mkdir()
        out = ExportWriter(folder / "files", format, max_lines)
        # closed as soon as the part is full: the database cursor is not left open
        with closing(store.rows(principal, filters, COLUMNS, offset)) as rows:
            if clicks is not None:
                collect_click_rows(rows, clicks[0], clicks[1], out)
            else:
                collect_rows(rows, selection, out)
        files = out.close()
        headers = {
            "X-Rankscope-Judgments": clicks[1] if clicks is not None else selection,
            "X-Rankscope-Queries": str(out.queries),
            "X-Rankscope-Skipped": str(out.skipped),
            "X-Rankscope-Truncated": "true" if out.truncated else "false",
            "X-Rankscope-Next-Offset": str(offset + out.rows),
        }
        if out.skipped:
            headers["X-Rankscope-Skipped-Records"] = ",".join(out.skipped_ids)
        if part is not None and format != "suite":
            chosen = {"qrels": files[0], "run": files[1], "queries": files[2]}[part]
            media = "application/x-ndjson" if chosen.suffix == ".jsonl" else "text/plain"
            headers["Content-Disposition"] = f'attachment; filename="{chosen.name}"'
            return ExportFile(chosen, media, headers, folder)
        archive = folder / f"rankscope-{format}.zip"
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED, compresslevel=ZIP_LEVEL) as zf:
            for path in files:
                zf.write(path, path.name)
        headers["Content-Disposition"] = f'attachment; filename="{archive.name}"'
        return ExportFile(archive, "application/zip", headers, folder)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


__all__ = [
    "HEADER_IDS",
    "ExportFile",
    "ExportWriter",
    "collect_click_rows",
    "collect_rows",
    "export_file",
    "trec_word",
]
