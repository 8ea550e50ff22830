"""What the embedded vector stores share: rankscope's embeddings in, a store's neighbours out.

Every vector-store engine (faiss, hnswlib, usearch, chroma, qdrant, lancedb, milvus) embeds
documents with rankscope's own embedding layer (:mod:`rankscope.engines.embeddings`: the same
model, the same on-disk cache, so every store indexes the very same vectors), hands the
normalised rows to its store and answers ``query_string`` queries with the store's nearest
neighbours by cosine similarity. Phrase, field, multi-field and boolean queries have no dense
meaning and are refused.

A document whose text embeds to the zero vector (no word the model knows, e.g. the hashing
embedder on punctuation) gets no vector and is never returned: its cosine is undefined. A query
whose vector is zero returns no hits, for the same reason.

Each engine also answers :meth:`VectorStoreEngine.exact_neighbours`: the exact nearest
neighbours of the same query vector over the same indexed vectors (a brute-force scan with
:func:`rankscope.engines.neighbours.exact_top`), from which the benchmark computes
``ann_recall@k``: what the approximate index costs in recall (see
:mod:`rankscope.bench.ann`).

With ``cache_queries: true`` a query's vector is computed once (at its first search, i.e. in the
benchmark's warmup pass) and reused, so the measured latency is the store's search alone; by
default every search embeds its query, as the ``vector`` and ``pgvector`` engines do.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import os
import shutil
import tempfile
import threading
import time
from abc import abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from rankscope.engines.base import Document, Engine, Hit, Query, QueryKind
from rankscope.engines.embeddings import (
    Embedder,
    Matrix,
    embedding_stats,
    make_embedder,
    normalize_rows,
    stats_since,
)
from rankscope.engines.neighbours import exact_top
from rankscope.errors import ConfigError, EngineError

#: the options every vector store takes for its embeddings (as the ``vector`` engine names them)
EMBEDDING_OPTIONS: tuple[str, ...] = (
    "fields",
    "batch_size",
    "device",
    "query_prefix",
    "document_prefix",
    "cache",
    "cache_dir",
    "max_seq_length",
    "backend",
    "embedder",
    "cache_queries",
)


@runtime_checkable
class ExactNeighbours(Protocol):
    """An engine that can say which indexed units are the exact nearest neighbours of a
    query's vector (the benchmark's ``ann_recall@k`` compares its hits with them)."""

    def exact_neighbours(self, query: Query, k: int) -> list[Hit] | None:
        """The ``k`` nearest units by exact cosine, best first, plus every unit tied with the
        k-th within :data:`~rankscope.engines.neighbours.EXACT_TIE_TOLERANCE`; ``[]`` when the
        query has no vector; ``None`` when this configuration does not search vectors (nothing
        to compare)."""
        ...


def folder_bytes(path: Path) -> int:
    """Bytes of the files under ``path`` (what the store keeps on disk)."""
    if path.is_file():
        return path.stat().st_size
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):  # a file the store removed meanwhile
                total += (Path(root) / name).stat().st_size
    return total


def check_int(engine: str, name: str, value: object, low: int, high: int | None = None) -> int:
    """``value`` as an int in ``[low, high]``, or a ConfigError naming the engine option."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or value < low
        or (high is not None and value > high)
    ):
        upper = "" if high is None else f", at most {high}"
        raise ConfigError(
            f"{engine} engine option {name!r} must be an integer of at least {low}{upper}",
            value=value,
        )
    return value


def check_choice(engine: str, name: str, value: object, choices: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ConfigError(
            f"{engine} engine option {name!r} must be one of {', '.join(choices)}",
            value=value,
        )
    return value


@dataclass
class StoreFolder:
    """Where a store keeps its files: the folder the ``path`` option names (kept), or a
    temporary one (removed on close)."""

    path: Path
    temporary: bool

    @classmethod
    def of(cls, path: str | Path | None, engine: str) -> StoreFolder:
        if path is None:
            return cls(Path(tempfile.mkdtemp(prefix=f"rankscope-{engine}-")), True)
        return cls(Path(path).expanduser(), False)

    def remove(self) -> None:
        if self.temporary:
            shutil.rmtree(self.path, ignore_errors=True)


class VectorStoreEngine(Engine):
    """Base class of the vector-store engines: embeds, keeps the unit vectors, delegates the
    index to the store (:meth:`_build`, :meth:`_knn`).

    Embedding options (as the ``vector`` engine's): ``model``, ``fields``, ``batch_size``,
    ``device``, ``query_prefix``, ``document_prefix``, ``cache``, ``cache_dir``,
    ``max_seq_length``, ``backend``, ``embedder`` (an object instead of ``model``), and
    ``cache_queries`` (embed each query once and reuse its vector: latency is then the store's
    search alone).
    """

    supported_kinds: ClassVar[frozenset[QueryKind]] = frozenset({"query_string"})
    extra_options: ClassVar[tuple[str, ...]] = EMBEDDING_OPTIONS
    embeds_text = True

    def __init__(self, model: str | Path | None = None, **embedding: Any) -> None:
        unknown = sorted(set(embedding) - set(EMBEDDING_OPTIONS))
        if unknown:
            raise ConfigError(
                f"bad options for engine {self.name!r}: unknown {', '.join(map(repr, unknown))}",
                value=unknown,
                hint=f"engine {self.name!r} accepts: {', '.join(self.accepted_options())}",
            )
        fields = embedding.get("fields", ("title", "text"))
        if isinstance(fields, str) or not fields or not all(isinstance(f, str) for f in fields):
            raise ConfigError(
                f"{self.name} engine option 'fields' must be a non-empty list of field names",
                value=fields,
                hint="e.g. fields: [title, text]",
            )
        self.fields = tuple(fields)
        self.cache_queries = bool(embedding.get("cache_queries", False))
        given: Embedder | None = embedding.get("embedder")
        self._owns_embedder = given is None
        self._model = model
        self._embedding = embedding
        self._embedder: Embedder | None = given
        self._query_vectors: dict[str, Matrix] = {}
        self._lock = threading.Lock()
        self._ids: list[str] = []
        self._matrix: Matrix = np.zeros((0, 0), dtype=np.float32)
        self._stats_at_index: dict[str, int | float] = {}
        self._embedded_docs = 0
        self._build_seconds: float | None = None
        self._index_bytes: int | None = None
        self._notes: list[str] = []

    # -- options ----------------------------------------------------------------------------
    @classmethod
    def accepted_options(cls) -> list[str]:
        own = [
            p.name
            for p in inspect.signature(cls.__init__).parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        return [*own, *EMBEDDING_OPTIONS]

    @classmethod
    def store_options(cls) -> list[str]:
        """The store's own options (its index and search settings, where it keeps its files):
        what :meth:`effective_params` stands for when configurations are compared."""
        return [name for name in cls.accepted_options() if name not in EMBEDDING_OPTIONS][1:]

    @property
    def embedder(self) -> Embedder:
        """The embedder, made on first use (an engine in a lexical mode never loads one)."""
        if self._embedder is None:
            e = self._embedding
            self._embedder = make_embedder(
                self._model,
                device=e.get("device"),
                batch_size=int(e.get("batch_size", 64)),
                query_prefix=str(e.get("query_prefix", "")),
                document_prefix=str(e.get("document_prefix", "")),
                cache=bool(e.get("cache", True)),
                cache_dir=e.get("cache_dir"),
                max_seq_length=e.get("max_seq_length"),
                backend=str(e.get("backend", "auto")),
            )
            self._stats_at_index = embedding_stats(self._embedder)
        return self._embedder

    # -- the store's part ---------------------------------------------------------------------
    @abstractmethod
    def _build(self, vectors: Matrix, docs: Sequence[Document]) -> None:
        """Replace the store's content with ``vectors`` (unit rows; row ``i`` is ``docs[i]``)
        and build its index."""

    @abstractmethod
    def _knn(self, vector: Matrix, k: int) -> list[tuple[int, float]]:
        """The store's ``k`` nearest rows to ``vector`` (``1 <= k <=`` rows indexed), as
        ``(row, cosine similarity as the store reports it)``, best first."""

    @abstractmethod
    def _search_params(self, k: int) -> dict[str, int | float | str | bool]:
        """The index and search parameters a search for ``k`` hits runs with, as the store
        applies them (see :meth:`Engine.effective_params`)."""

    def effective_params(self, k: int) -> dict[str, int | float | str | bool]:
        return self._search_params(k)

    def notes(self) -> list[str]:
        return list(self._notes)

    def _store_bytes(self) -> int | None:
        """Bytes the store's index takes on disk (its files, or its serialised form)."""
        return None

    def _store_stats(self) -> dict[str, int | float]:
        """Store-specific counters for :meth:`index_stats` (e.g. ``exact_search``)."""
        return {}

    def _close_store(self) -> None:
        """Release the store (files, processes)."""

    # -- the contract -------------------------------------------------------------------------
    @staticmethod
    def document_text(doc: Document, fields: Sequence[str]) -> str:
        return "\n".join(t for t in (doc.get(f).strip() for f in fields) if t)

    def index(self, docs: Iterable[Document]) -> None:
        self._query_vectors = {}
        self._notes = []
        kept_docs, vectors = self._embed_corpus(docs)
        self._ids = [d.id for d in kept_docs]
        self._matrix = vectors
        started = time.perf_counter()
        self._build(vectors, kept_docs)
        self._build_seconds = time.perf_counter() - started
        self._index_bytes = self._store_bytes()

    def _embed_corpus(self, docs: Iterable[Document]) -> tuple[list[Document], Matrix]:
        """The documents that get a vector, and their unit vectors (zero rows dropped)."""
        embedder = self.embedder
        self._stats_at_index = embedding_stats(embedder)
        all_docs = list(docs)
        seen: set[str] = set()
        for d in all_docs:
            if d.id in seen:
                raise EngineError(f"{self.name} engine: duplicate document id {d.id!r}")
            seen.add(d.id)
        self._embedded_docs = len(all_docs)
        if not all_docs:
            return [], np.zeros((0, 0), dtype=np.float32)
        raw = embedder.embed_documents([self.document_text(d, self.fields) for d in all_docs])
        if raw.shape[0] != len(all_docs):
            raise EngineError(
                f"embedder {embedder.model_id!r} returned {raw.shape[0]} vectors for "
                f"{len(all_docs)} texts"
            )
        vectors = normalize_rows(raw)
        norms = np.linalg.norm(vectors, axis=1)
        keep = np.flatnonzero(np.isfinite(norms) & (norms > 0.5))
        if keep.size == len(all_docs):
            return all_docs, np.ascontiguousarray(vectors)
        return [all_docs[i] for i in keep], np.ascontiguousarray(vectors[keep])

    def _query_vector(self, text: str) -> Matrix | None:
        """The query's unit vector (None when it has none: empty text, no known word)."""
        if not text.strip():
            return None
        if self.cache_queries:
            found = self._query_vectors.get(text)
            if found is not None:
                return found
        q = normalize_rows(self.embedder.embed_queries([text]))[0]
        if self._matrix.shape[0] and q.shape[0] != self._matrix.shape[1]:
            raise EngineError(
                f"query embedding has {q.shape[0]} dimensions but the index has "
                f"{self._matrix.shape[1]}; index and queries must use the same model"
            )
        norm = float(np.linalg.norm(q))
        vector = q if math.isfinite(norm) and norm > 0.5 else None
        if self.cache_queries and vector is not None:
            self._query_vectors[text] = vector
        return vector

    def _search(self, query: Query, k: int) -> list[Hit]:
        n = len(self._ids)
        if n == 0:
            return []
        vector = self._query_vector(query.text)
        if vector is None:
            return []
        found = self._knn(vector, min(k, n))
        hits: dict[int, float] = {}
        for row, score in found:
            if 0 <= row < n and row not in hits:
                hits[row] = float(score)
        # stores order by their own distance; equal scores keep the store's order
        ranked = sorted(enumerate(hits.items()), key=lambda p: (-p[1][1], p[0]))
        return [Hit(doc_id=self._ids[row], score=score) for _, (row, score) in ranked[:k]]

    def exact_neighbours(self, query: Query, k: int) -> list[Hit] | None:
        """The exact nearest neighbours of the query's vector over the indexed vectors, with
        exact cosine scores (see :class:`ExactNeighbours`)."""
        self.check_kind(query)
        if not self._ids:
            return []
        vector = self._query_vector(query.text)
        if vector is None:
            return []
        scores = self._matrix @ vector
        return [Hit(self._ids[i], float(scores[i])) for i in exact_top(scores, k)]

    def index_stats(self) -> Mapping[str, int | float]:
        """Embedding-cache counters of the last :meth:`index` (``documents_embedded`` without
        a cache), ``build_seconds`` (the store building its index from the vectors, without
        embedding), ``index_bytes`` (what the store's index takes on disk or serialised),
        ``vectors`` (units indexed) and the store's own counters."""
        stats: dict[str, int | float] = {}
        if self._embedder is not None:
            cached = embedding_stats(self._embedder)
            stats = (
                stats_since(cached, self._stats_at_index)
                if cached
                else {"documents_embedded": self._embedded_docs}
            )
        if self._build_seconds is not None:
            stats["build_seconds"] = self._build_seconds
        if self._index_bytes is not None:
            stats["index_bytes"] = self._index_bytes
        stats["vectors"] = len(self._ids)
        stats.update(self._store_stats())
        return stats

    def close(self) -> None:
        try:
            self._close_store()
        finally:
            self._matrix = np.zeros((0, 0), dtype=np.float32)
            self._query_vectors = {}
            cache = getattr(self._embedder, "cache", None)
            if self._owns_embedder and cache is not None:
                cache.close()
                self._embedder = None


def wrap_store_error(engine: str, doing: str, error: Exception) -> EngineError:
    """A store library's exception as an :class:`EngineError` naming the engine and step."""
    text = " ".join(str(error).split()) or type(error).__name__
    return EngineError(f"{engine} engine: {doing} failed: {type(error).__name__}: {text}")
