"""File input/output the judge needs: runs, qrels, BEIR queries and corpus, TREC qrels out."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from rankscope.data import Qrels, Run, read_qrels, read_run, write_qrels
from rankscope.errors import FormatError
from rankscope.suite.corpus import iter_jsonl, open_text

PathLike = str | os.PathLike[str]


def load_run(path: PathLike, name: str | None = None) -> Run:
    """A run from any format :func:`rankscope.data.read_run` reads (TREC, JSONL, CSV, ...)."""
    return read_run(path, name=name)


def load_qrels(path: PathLike) -> Qrels:
    """Qrels from any format :func:`rankscope.data.read_qrels` reads (TREC, BEIR TSV, ...)."""
    return read_qrels(path)


def write_qrels_trec(qrels: Qrels, path: PathLike) -> None:
    """TREC qrels: ``query_id 0 doc_id grade`` per line, whatever the suffix."""
    write_qrels(qrels, path, format="trec")


def read_queries(path: PathLike) -> dict[str, str]:
    """BEIR ``queries.jsonl`` (``_id``, ``text``) or a TSV of ``id<TAB>text``."""
    p = Path(path)
    out: dict[str, str] = {}
    if p.suffix in {".tsv", ".txt"}:
        with open_text(p) as f:
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
