"""Retrieval for the needle benchmark: an engine over a corpus, or the user's own function.

An engine retrieves through the benchmark's own runner (:func:`rankscope.bench.runner.run_config`:
build, index, search, timing), over the corpus chunked by :func:`rankscope.engines.chunking.
chunk_documents` when asked; the needle benchmark only adds the chunk texts the grader reads. A
pipeline is a function ``module:function(question, k)`` loaded by :mod:`rankscope.callables`.
Either way each question gets its top-k hits (with text) and its retrieval latency.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from rankscope.callables import load_function
from rankscope.engines.base import Document, Hit, Query
from rankscope.engines.chunking import chunk_documents
from rankscope.errors import EngineError
from rankscope.judge.needle.questions import NeedleQuestion
from rankscope.suite.corpus import read_jsonl_documents
from rankscope.suite.schema import BenchConfig, SuiteSettings

#: a retrieval function: (question, k) -> the top k hits
Retriever = Callable[[str, int], Sequence[Hit]]


@dataclass(frozen=True, slots=True)
class Retrieved:
    """One question's top-k hits (each with its text) and the retrieval latency."""

    hits: tuple[Hit, ...]
    latency_ms: float
    #: chunk id -> document id, for hits of a chunked corpus
    parents: Mapping[str, str] = field(default_factory=dict)


class RetrievalSource(Protocol):
    """Where hits come from; ``describe`` says what decides them (for resuming a run)."""

    def retrieve(self, questions: Sequence[NeedleQuestion], k: int) -> dict[str, Retrieved]: ...

    def describe(self) -> dict[str, Any]: ...


def needle_rank(
    hits: Sequence[Hit],
    needle_ids: Sequence[str],
    needle_text: str,
    parents: Mapping[str, str] | None = None,
) -> int | None:
    """1-based rank of the first hit that is the needle, or None when absent.

    A hit is the needle when its id, or the id of the document it is a chunk of, is one of
    ``needle_ids``, or when its text contains ``needle_text`` (case and spacing ignored).
    """
    ids = set(needle_ids)
    fragment = _norm(needle_text) if needle_text else ""
    for rank, hit in enumerate(hits, 1):
        parent = (parents or {}).get(hit.doc_id) or (
            hit.doc_id.rsplit("#", 1)[0] if "#" in hit.doc_id else hit.doc_id
        )
        if ids and (hit.doc_id in ids or parent in ids):
            return rank
        if fragment and hit.text and fragment in _norm(hit.text):
            return rank
    return None


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


@dataclass(frozen=True)
class FunctionRetrieval:
    """The user's retriever ``fn(question, k)``, returning :class:`Hit` values, strings (chunk
    texts) or mappings with ``id``/``doc_id``, ``text`` and optionally ``score``."""

    function: Retriever
    name: str = "function"

    def describe(self) -> dict[str, Any]:
        return {"pipeline": self.name}

    def retrieve(self, questions: Sequence[NeedleQuestion], k: int) -> dict[str, Retrieved]:
        out: dict[str, Retrieved] = {}
        for q in questions:
            started = time.perf_counter()
            try:
                raw = list(self.function(q.question, k))
            except Exception as exc:
                raise EngineError(
                    f"pipeline {self.name!r} failed on question {q.id!r}: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
            latency = (time.perf_counter() - started) * 1000.0
            out[q.id] = Retrieved(tuple(self._hits(raw)[:k]), round(latency, 3))
        return out

    def _hits(self, items: Sequence[object]) -> list[Hit]:
        out: list[Hit] = []
        for n, item in enumerate(items, 1):
            if isinstance(item, Hit):
                out.append(item)
            elif isinstance(item, str):
                out.append(Hit(doc_id=f"#{n}", score=float(-n), text=item))
            elif isinstance(item, Mapping):
                did = str(item.get("doc_id") or item.get("id") or f"#{n}")
                try:
                    score = float(item.get("score", -n))
                except (TypeError, ValueError):
                    raise EngineError(
                        f"pipeline {self.name!r} returned a non-numeric score at position {n}",
                    ) from None
                out.append(Hit(did, score, str(item.get("text") or "")))
            else:
                raise EngineError(
                    f"pipeline {self.name!r} must return Hit values, strings or mappings; got "
                    f"{type(item).__name__} at position {n}"
                )
        return out


def pipeline_retrieval(ref: str, base_dir: str | Path | None = None) -> FunctionRetrieval:
    """The function ``module:function`` (found in ``base_dir`` first, e.g. the working folder)."""
    fn = load_function(ref, "--pipeline", base_dir=base_dir, example="mypkg.rag:retrieve")
    return FunctionRetrieval(fn, ref)


@dataclass(frozen=True)
class EngineRetrieval:
    """An engine indexing a BEIR/JSONL corpus (chunked when ``chunk_size`` is set)."""

    engine: str
    corpus: Path
    options: Mapping[str, Any] = field(default_factory=dict)
    chunk_size: int | None = None
    chunk_overlap: int = 0

    def describe(self) -> dict[str, Any]:
        digest = hashlib.sha256()
        with self.corpus.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        return {
            "engine": self.engine,
            "options": {k: repr(v) for k, v in sorted(self.options.items())},
            "corpus_sha256": digest.hexdigest(),
            "chunk_size": self.chunk_size,
            "chunk_overlap": self.chunk_overlap,
        }

    def units(self) -> list[Document]:
        """The documents the engine indexes: the corpus, or its chunks."""
        docs = list(read_jsonl_documents(self.corpus))
        if self.chunk_size is None:
            return docs
        return chunk_documents(docs, self.chunk_size, self.chunk_overlap)

    def retrieve(self, questions: Sequence[NeedleQuestion], k: int) -> dict[str, Retrieved]:
        from rankscope.bench.runner import run_config  # numpy, pyarrow: the benchmark's own

        units = self.units()
        if not questions:
            return {}
        texts = {u.id: u.text for u in units}
        parents = {u.id: u.parent_id for u in units if u.parent_id is not None}
        # One timed pass, no warm-up: the latency is that of the question's own search.
        settings = SuiteSettings(k=[k], max_k=k, warmup=0, repeats=1, concurrency=1)
        config = BenchConfig(name=f"needle-{self.engine}", engine=self.engine, options=self.options)
        queries = [Query(id=q.id, text=q.question) for q in questions]
        record = run_config(config, units, queries, settings)
        if _field(record, "status") != "ok":
            raise EngineError(f"engine {self.engine!r}: {_field(record, 'error')}")
        return _from_record(record, texts, parents)


def _field(record: object, name: str) -> Any:
    # The runner's record is a mapping here and a typed ConfigRecord once the benchmark's typed
    # records land; both carry status, error, rankings and latency_samples_s.
    return record[name] if isinstance(record, Mapping) else getattr(record, name)


def _from_record(
    record: object, texts: Mapping[str, str], parents: Mapping[str, str]
) -> dict[str, Retrieved]:
    """Hits and latency per question from a benchmark record (``rankings`` of ``[id, score]``
    rows, ``latency_samples_s`` of one sample per query)."""
    out: dict[str, Retrieved] = {}
    samples: Mapping[str, Sequence[float]] = _field(record, "latency_samples_s")
    rankings: Mapping[str, Sequence[Sequence[Any]]] = _field(record, "rankings")
    for qid, rows in rankings.items():
        hits = tuple(Hit(str(doc), float(score), texts.get(str(doc), "")) for doc, score in rows)
        latency = samples[qid][0] * 1000.0 if samples.get(qid) else 0.0
        out[qid] = Retrieved(hits, round(latency, 3), parents)
    return out


__all__ = [
    "EngineRetrieval",
    "FunctionRetrieval",
    "RetrievalSource",
    "Retrieved",
    "Retriever",
    "needle_rank",
    "pipeline_retrieval",
]
