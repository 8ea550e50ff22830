"""File input/output the judge needs: runs, qrels, BEIR queries and corpus, TREC qrels out.

Queries and corpus are read by the benchmark's readers (:mod:`rankscope.suite.corpus`), so a
file the benchmark reads is read here the same way (ids, titles, ``.gz``, TSV queries, and
file:line errors for bad bytes or JSON).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from rankscope.engines.base import Document
from rankscope.suite.corpus import iter_jsonl, read_jsonl_documents
from rankscope.suite.corpus import read_queries as _read_query_list

if TYPE_CHECKING:  # numpy and pyarrow load with the first run or qrels, not with the judge
    from rankscope.data import Qrels, Run

PathLike = str | os.PathLike[str]


def load_run(path: PathLike, name: str | None = None) -> Run:
    """A run from any format :func:`rankscope.data.read_run` reads (TREC, JSONL, CSV, ...)."""
    from rankscope.data import read_run  # numpy, pyarrow: with the first run (see above)

    return read_run(path, name=name)


def load_qrels(path: PathLike) -> Qrels:
    """Qrels from any format :func:`rankscope.data.read_qrels` reads (TREC, BEIR TSV, ...)."""
    from rankscope.data import read_qrels  # numpy, pyarrow (see above)

    return read_qrels(path)


def write_qrels_trec(qrels: Qrels, path: PathLike) -> None:
    """TREC qrels: ``query_id 0 doc_id grade`` per line, whatever the suffix."""
    from rankscope.data import write_qrels  # numpy, pyarrow (see above)

    write_qrels(qrels, path, format="trec")


def read_queries(path: PathLike) -> dict[str, str]:
    """``{query_id: text}`` from BEIR ``queries.jsonl`` or a TSV of ``id<TAB>text``."""
    return {q.id: q.text for q in _read_query_list(Path(path))}


def read_corpus(path: PathLike) -> dict[str, Document]:
    """``{doc_id: Document}`` from a BEIR ``corpus.jsonl`` (``_id``, ``title``, ``text``)."""
    return {d.id: d for d in read_jsonl_documents(Path(path))}


__all__ = [
    "iter_jsonl",
    "load_qrels",
    "load_run",
    "read_corpus",
    "read_queries",
    "write_qrels_trec",
]
