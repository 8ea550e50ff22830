"""Embedded dense retrieval: exact cosine similarity over normalised embeddings (numpy).

Each document is embedded once, as its title and text joined (or the fields named by the
``fields`` option). ``query_string`` queries rank documents by cosine with the query embedding.
``match`` queries rank by cosine against the embedding of that one field, computed on first use
(and cached on disk like every document embedding). Queries are embedded at search time, so the
measured latency includes the model. Phrase, multi-field and boolean queries have no dense
meaning and are refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np

from rankscope.engines.base import Document, Engine, Hit, Query, QueryKind, register_engine
from rankscope.engines.embeddings import (
    Embedder,
    Matrix,
    embedding_stats,
    make_embedder,
    stats_since,
)
from rankscope.engines.neighbours import exact_top, top_k
from rankscope.errors import ConfigError, EngineError


@register_engine("vector")
class VectorEngine(Engine):
    """Exact cosine search.

    Options: ``model`` (a sentence-transformers name or local path; default the offline
    all-MiniLM-L6-v2; ``"hashing"`` or ``"hashing:<dim>"`` for feature hashing without a model),
    ``fields`` (fields embedded together, default title and text), ``batch_size``, ``device``,
    ``query_prefix`` / ``document_prefix``, ``cache`` (on-disk embedding cache, default on) and
    ``cache_dir`` (default ``$RANKSCOPE_CACHE_DIR``: see :mod:`rankscope.config`),
    ``max_seq_length`` (word pieces embedded per text; default the model's own setting),
    ``backend`` (``auto``: ONNX Runtime for the bundled or a local BERT model when the ``onnx``
    extra is installed, else sentence-transformers; ``onnx``; ``torch``). An
    :class:`~rankscope.engines.embeddings.Embedder` instance may be passed as ``embedder`` instead.
    """

    name = "vector"
    supported_kinds: ClassVar[frozenset[QueryKind]] = frozenset({"query_string", "match"})
    thread_safe = True
    embeds_text = True

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        fields: Sequence[str] = ("title", "text"),
        batch_size: int = 64,
        device: str | None = None,
        query_prefix: str = "",
        document_prefix: str = "",
        cache: bool = True,
        cache_dir: str | Path | None = None,
        max_seq_length: int | None = None,
        backend: str = "auto",
        embedder: Embedder | None = None,
    ) -> None:
        if isinstance(fields, str) or not fields or not all(isinstance(f, str) for f in fields):
            raise ConfigError(
                "vector engine option 'fields' must be a non-empty list of field names",
                value=fields,
                hint="e.g. fields: [title, text]",
            )
        self.fields = tuple(fields)
        self._owns_embedder = embedder is None
        self.embedder = embedder or make_embedder(
            model,
            device=device,
            batch_size=batch_size,
            query_prefix=query_prefix,
            document_prefix=document_prefix,
            cache=cache,
            cache_dir=cache_dir,
            max_seq_length=max_seq_length,
            backend=backend,
        )
        self._docs: list[Document] = []
        self._ids: list[str] = []
        self._matrix: Matrix | None = None
        self._field_matrices: dict[str, Matrix] = {}
        self._known_fields: set[str] = set()
        self._stats_at_index: dict[str, int | float] = embedding_stats(self.embedder)
        self._embedded_docs = 0

    @staticmethod
    def document_text(doc: Document, fields: Sequence[str]) -> str:
        """The text embedded for a document: its non-empty fields, one per line."""
        return "\n".join(t for t in (doc.get(f).strip() for f in fields) if t)

    def index(self, docs: Iterable[Document]) -> None:
        self._stats_at_index = embedding_stats(self.embedder)
        self._embedded_docs = 0
        self._docs = list(docs)
        self._ids = [d.id for d in self._docs]
        self._field_matrices = {}
        self._known_fields = {"title", "text"}
        for d in self._docs:
            self._known_fields.update(d.fields)
        texts = [self.document_text(d, self.fields) for d in self._docs]
        self._matrix = self._embed_docs(texts)

    def index_stats(self) -> Mapping[str, int | float]:
        """Embedding-cache hits and misses (and seconds spent embedding) of the documents
        embedded since :meth:`index` began (field embeddings made for ``match`` queries
        included); ``documents_embedded`` when the embedder has no cache."""
        cached = embedding_stats(self.embedder)
        if cached:
            return stats_since(cached, self._stats_at_index)
        return {"documents_embedded": self._embedded_docs}

    def _embed_docs(self, texts: list[str]) -> Matrix:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        self._embedded_docs += len(texts)
        m = self.embedder.embed_documents(texts)
        if m.shape[0] != len(texts):
            raise EngineError(
                f"embedder {self.embedder.model_id!r} returned {m.shape[0]} vectors for "
                f"{len(texts)} texts"
            )
        return m

    def _matrix_for(self, query: Query) -> Matrix | None:
        if query.kind != "match" or query.field is None:
            return self._matrix
        field = query.field
        if field not in self._known_fields:
            raise EngineError(
                f"query {query.id!r} names field {field!r}, which no indexed document has; "
                f"known fields: {', '.join(sorted(self._known_fields))}"
            )
        if (field,) == tuple(self.fields):
            return self._matrix  # the documents are embedded as exactly this field already
        if field not in self._field_matrices:
            self._field_matrices[field] = self._embed_docs([d.get(field) for d in self._docs])
        return self._field_matrices[field]

    def _search(self, query: Query, k: int) -> list[Hit]:
        matrix = self._matrix_for(query)
        if matrix is None or matrix.shape[0] == 0 or not query.text.strip():
            return []
        q = self.embedder.embed_queries([query.text])[0]
        if q.shape[0] != matrix.shape[1]:
            raise EngineError(
                f"query embedding has {q.shape[0]} dimensions but the index has "
                f"{matrix.shape[1]}; index and queries must use the same model"
            )
        scores = matrix @ q
        return [Hit(doc_id=self._ids[i], score=float(scores[i])) for i in top_k(scores, k)]

    def exact_neighbours(self, query: Query, k: int) -> list[Hit] | None:
        """The exact top ``k`` and its ties (see :mod:`rankscope.engines.neighbours`): this
        engine's own answer, so its ``ann_recall@k`` is 1 by construction."""
        self.check_kind(query)
        matrix = self._matrix_for(query)
        if matrix is None or matrix.shape[0] == 0 or not query.text.strip():
            return []
        q = self.embedder.embed_queries([query.text])[0]
        if not float(np.linalg.norm(q)) > 0:
            return []  # no known word: every cosine is 0, there are no nearest neighbours
        scores = matrix @ q
        return [Hit(doc_id=self._ids[i], score=float(scores[i])) for i in exact_top(scores, k)]

    def close(self) -> None:
        self._matrix = None
        self._field_matrices = {}
        cache = getattr(self.embedder, "cache", None)
        if self._owns_embedder and cache is not None:
            cache.close()
