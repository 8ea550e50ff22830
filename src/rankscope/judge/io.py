"""File input/output the judge needs: runs, qrels, BEIR queries and corpus, TREC qrels out.

Runs and qrels go through :mod:`rankscope.data`'s readers when they are available; the small
TREC / BEIR-TSV parser here is the fallback.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from rankscope.data import Qrels, Run
from rankscope.errors import FormatError, InputError

PathLike = str | os.PathLike[str]


def _open_text(path: Path) -> IO[str]:
    try:
        if path.suffix == ".gz":
            return gzip.open(path, "rt", encoding="utf-8")
        return path.open(encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot open file: {e.strerror}", path=path) from None


def load_run(path: PathLike, name: str | None = None) -> Run:
    """A run from a file (TREC six columns; other formats through rankscope.data.read_run)."""
    try:
        from rankscope.data import read_run  # type: ignore[attr-defined]
    except ImportError:
        read_run = None
    if read_run is not None:
        run: Run = read_run(path, name=name)
        return run
    p = Path(path)
    data: dict[str, dict[str, float]] = {}
    tag = None
    with _open_text(p) as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 6:
                raise FormatError(
                    f"a TREC run line has 6 columns, this one has {len(parts)}",
                    path=p,
                    line=n,
                    value=line.rstrip("\n"),
                    hint="expected: query_id Q0 doc_id rank score run_name",
                )
            try:
                score = float(parts[4])
            except ValueError:
                raise FormatError(
                    "the score column is not a number", path=p, line=n, value=parts[4]
                ) from None
            data.setdefault(parts[0], {})[parts[2]] = score
            tag = tag or parts[5]
    return Run.from_dict(data, name=name or tag or p.stem, source=str(p))


def load_qrels(path: PathLike) -> Qrels:
    """Qrels from a file (TREC four columns or BEIR TSV with a header)."""
    try:
        from rankscope.data import read_qrels  # type: ignore[attr-defined]
    except ImportError:
        read_qrels = None
    if read_qrels is not None:
        qrels: Qrels = read_qrels(path)
        return qrels
    p = Path(path)
    data: dict[str, dict[str, int]] = {}
    with _open_text(p) as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if not parts or (n == 1 and parts[0] == "query-id"):
                continue
            if len(parts) == 4:
                q, d, g = parts[0], parts[2], parts[3]
            elif len(parts) == 3:
                q, d, g = parts
            else:
                raise FormatError(
                    f"a qrels line has 4 columns (TREC) or 3 (BEIR TSV), this one has {len(parts)}",
                    path=p,
                    line=n,
                    value=line.rstrip("\n"),
                )
            try:
                data.setdefault(q, {})[d] = int(g)
            except ValueError:
                raise FormatError(
                    "the relevance grade is not an integer", path=p, line=n, value=g
                ) from None
    return Qrels.from_dict(data, source=str(p))


def write_qrels_trec(qrels: Qrels, path: PathLike) -> None:
    """TREC qrels: ``query_id 0 doc_id grade`` per line."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", encoding="utf-8") as f:
        for q, d, g in qrels:
            f.write(f"{q} 0 {d} {g}\n")


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; a bad line raises FormatError."""
    with _open_text(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise FormatError(
                    f"invalid JSON: {e.msg}", path=path, line=n, value=line.strip()[:80]
                ) from None
            if not isinstance(obj, dict):
                raise FormatError("each JSONL line must be an object", path=path, line=n)
            yield n, obj


def read_queries(path: PathLike) -> dict[str, str]:
    """BEIR ``queries.jsonl`` (``_id``, ``text``) or a TSV of ``id<TAB>text``."""
    p = Path(path)
    out: dict[str, str] = {}
    if p.suffix in {".tsv", ".txt"}:
        with _open_text(p) as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                qid, sep, text = line.rstrip("\n").partition("\t")
                if not sep:
                    raise FormatError(
                        "a query TSV line is 'id<TAB>text'", path=p, line=n, value=line.strip()
                    )
                out[qid] = text
        return out
    for n, obj in iter_jsonl(p):
        raw_id = obj.get("_id", obj.get("id", obj.get("query_id")))
        if raw_id is None or "text" not in obj:
            raise FormatError(
                "a query line needs '_id' and 'text'", path=p, line=n, value=sorted(obj)
            )
        out[str(raw_id)] = str(obj["text"])
    return out


@dataclass(frozen=True, slots=True)
class CorpusDoc:
    id: str
    title: str
    text: str


def read_corpus(path: PathLike) -> dict[str, CorpusDoc]:
    """BEIR ``corpus.jsonl``: ``_id``, ``title`` (optional), ``text``."""
    p = Path(path)
    out: dict[str, CorpusDoc] = {}
    for n, obj in iter_jsonl(p):
        did = obj.get("_id", obj.get("id", obj.get("doc_id")))
        if did is None or "text" not in obj:
            raise FormatError(
                "a corpus line needs '_id' and 'text'", path=p, line=n, value=sorted(obj)
            )
        out[str(did)] = CorpusDoc(str(did), str(obj.get("title") or ""), str(obj["text"]))
    return out


__all__ = [
    "CorpusDoc",
    "iter_jsonl",
    "load_qrels",
    "load_run",
    "read_corpus",
    "read_queries",
    "write_qrels_trec",
]
