"""The files a benchmark writes from its records: run files, chunk rankings, judgments.

Run files are written with :func:`rankscope.data.write_run` (scores in the shortest form that
reads back to the same double), from the same :class:`~rankscope.data.Run` values that are
evaluated, so ``rankscope eval`` on a written run reproduces ``results.json`` exactly. Each file
is written atomically and its SHA-256 kept in the record, so a resumed benchmark notices a file
that was truncated or edited since and writes it again from the checkpoint.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from rankscope.bench.checkpoint import safe_name
from rankscope.bench.config_record import ConfigRecord
from rankscope.bench.evaluation import ranking_run
from rankscope.data import Qrels, write_qrels, write_run
from rankscope.data.run import Run
from rankscope.suite.relevance import PatternCredit
from rankscope.util.files import atomic_write, atomic_write_text

#: TREC unless an id holds whitespace (TREC separates fields by whitespace): then JSONL
FileFormat = Literal["trec", "jsonl"]
_SUFFIX: dict[FileFormat, str] = {"trec": ".trec", "jsonl": ".jsonl"}
_SPACE = re.compile(r"\s")


def file_format(ids: Iterable[str]) -> FileFormat:
    """The format every run and judgment file of a benchmark is written in."""
    return "trec" if all(trec_safe(value) for value in ids) else "jsonl"


def trec_safe(value: str) -> bool:
    """Whether an id can stand in a TREC file: not empty, no whitespace (``str.isspace``'s,
    which is what ``\\s`` matches in a str pattern)."""
    return bool(value) and _SPACE.search(value) is None


def write_run_files(out: Path, record: ConfigRecord, fmt: FileFormat) -> None:
    """The run file, for chunked configurations the chunk rankings, and for vector searches
    the two rankings ``ann_recall@k`` compares; sets their paths and hashes on ``record``."""
    base = safe_name(record.name)
    run_path = out / "runs" / f"{base}{_SUFFIX[fmt]}"
    atomic_write(
        run_path, lambda tmp: write_run(ranking_run(record.rankings, base), tmp, format=fmt)
    )
    record.run_file = run_path.relative_to(out).as_posix()
    record.run_sha256 = file_sha256(run_path)
    chunks = record.chunk_rankings
    if chunks:
        rows = []
        for qid in sorted(chunks):
            for rank, hit in enumerate(chunks[qid], start=1):
                row = {"query_id": qid, "rank": rank, **hit.model_dump()}
                rows.append(json.dumps(row, ensure_ascii=False) + "\n")
        chunk_path = out / "chunks" / f"{base}.jsonl"
        atomic_write_text(chunk_path, "".join(rows))
        record.chunks_file = chunk_path.relative_to(out).as_posix()
        record.chunks_sha256 = file_sha256(chunk_path)
    if record.exact_rankings is not None and record.ann_units is not None:
        # the two sides of ann_recall@k (rankscope.bench.ann), as runs of the indexed units
        exact = _write_ranking(
            out / "ann" / f"{base}.exact{_SUFFIX[fmt]}", record.exact_rankings, fmt
        )
        units = _write_ranking(out / "ann" / f"{base}.units{_SUFFIX[fmt]}", record.ann_units, fmt)
        record.exact_run_file, record.exact_run_sha256 = exact
        record.ann_units_file, record.ann_units_sha256 = units


def write_pattern_runs(
    out: Path, records: Iterable[ConfigRecord], credit: PatternCredit | None, fmt: FileFormat
) -> None:
    """With ``relevance: pattern``, each successful configuration's run rewritten into pattern
    units (:meth:`PatternCredit.credit`) as ``patterns/<name>``: what the measures are computed
    from, for ``rankscope eval`` with a view's qrels file. Files of an earlier benchmark in the
    folder are removed first, so what is there always matches results.json."""
    for stale in (*out.glob("patterns/*.trec"), *out.glob("patterns/*.jsonl")):
        stale.unlink(missing_ok=True)
    if credit is None:
        return
    for record in records:
        if record.ok:
            base = safe_name(record.name)
            _write_run(
                out / "patterns" / f"{base}{_SUFFIX[fmt]}",
                credit.credit(ranking_run(record.rankings, base)),
                fmt,
            )


def _write_run(path: Path, run: Run, fmt: FileFormat) -> None:
    atomic_write(path, lambda tmp: write_run(run, tmp, format=fmt))


def _write_ranking(
    path: Path, rankings: dict[str, list[tuple[str, float]]], fmt: FileFormat
) -> tuple[str, str]:
    """A run file of ``rankings`` at ``path``; its path relative to the output folder (two
    levels up) and its SHA-256."""
    run = ranking_run(rankings, path.stem)
    atomic_write(path, lambda tmp: write_run(run, tmp, format=fmt))
    return path.relative_to(path.parent.parent).as_posix(), file_sha256(path)


def run_files_intact(out: Path, record: ConfigRecord) -> bool:
    """Whether the record's files are there with the content it wrote."""
    pairs = [
        (record.run_file, record.run_sha256),
        (record.chunks_file, record.chunks_sha256),
        (record.exact_run_file, record.exact_run_sha256),
        (record.ann_units_file, record.ann_units_sha256),
    ]
    if record.run_file is None:
        return False
    for rel, digest in pairs:
        if rel is None:
            continue
        path = out / rel
        if digest is None or not path.is_file() or file_sha256(path) != digest:
            return False
    return True


def write_qrels_file(out: Path, qrels: Qrels, stem: str, fmt: FileFormat) -> str:
    """Judgments as ``rankscope eval`` reads them; returns the path relative to ``out``."""
    path = out / f"{stem}{'.txt' if fmt == 'trec' else '.jsonl'}"
    atomic_write(path, lambda tmp: write_qrels(qrels, tmp, format=fmt))
    return path.relative_to(out).as_posix()


RESULTS = "results.json"


def remove_results(out: Path) -> None:
    """Delete results.json and the judgment files written with it."""
    (out / RESULTS).unlink(missing_ok=True)
    for pattern in ("qrels.txt", "qrels.jsonl", "qrels-*.txt", "qrels-*.jsonl"):
        for path in out.glob(pattern):
            path.unlink(missing_ok=True)


def remove_run_files(out: Path) -> None:
    """Delete the run and chunk files a benchmark wrote (``--fresh``)."""
    for pattern in ("runs/*.trec", "runs/*.jsonl", "chunks/*.jsonl", "ann/*.trec", "ann/*.jsonl"):
        for path in out.glob(pattern):
            path.unlink(missing_ok=True)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
