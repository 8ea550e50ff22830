"""Second-stage reranking of any engine's top hits.

The wrapped engine (a nested spec such as ``{engine: sqlite}``) returns its top ``depth`` hits;
they are re-scored and re-sorted by

- ``mode="cross-encoder"``: a sentence-transformers ``CrossEncoder`` scoring (query, document)
  pairs (``model`` names it: a Hugging Face name in the local cache, or a local directory);
- ``mode="embedding"``: cosine between the query and document embeddings of an embedding model
  (``model`` as for the vector engine; default the offline all-MiniLM-L6-v2), cached on disk.

The document text scored is the title and text (or the ``fields`` option) as indexed. Hits
below ``depth`` are not returned: ask for ``k <= depth``, or the depth grows to ``k``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from rankscope.engines._nested import build_engine
from rankscope.engines.base import (
    Document,
    Engine,
    Hit,
    Query,
    register_engine,
    spec_with_embedding_model,
)
from rankscope.engines.embeddings import (
    Embedder,
    add_stats,
    embedding_stats,
    make_embedder,
    stats_since,
)
from rankscope.engines.stream import DocumentStream
from rankscope.engines.vector import VectorEngine
from rankscope.errors import ConfigError, EngineError
from rankscope.util.extras import needs_extra

# Imported where used, so that this module imports without them: sentence-transformers (the embed
# extra).

RerankMode = Literal["cross-encoder", "embedding"]


class CrossEncoderScorer:
    """A sentence-transformers CrossEncoder, loaded on first use."""

    def __init__(
        self, model: str, *, device: str | None = None, batch_size: int = 32, max_length: int = 512
    ) -> None:
        self.model_name = model
        self.device = device
        self.batch_size = batch_size
        self.max_length = max_length
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from sentence_transformers import CrossEncoder
                except ImportError as exc:
                    raise EngineError(
                        needs_extra(
                            "rerank mode 'cross-encoder'",
                            "the sentence-transformers package",
                            "embed",
                        )
                    ) from exc
                try:
                    self._model = CrossEncoder(
                        self.model_name, device=self.device, max_length=self.max_length
                    )
                except Exception as exc:  # the library raises many types
                    raise EngineError(
                        f"cannot load cross-encoder {self.model_name!r}: {exc}. Give a local "
                        "model directory or a model name present in the Hugging Face cache"
                    ) from exc
            return self._model

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        model = self._load()
        scores = model.predict(
            [(query, t) for t in texts],
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        arr = np.asarray(scores, dtype=np.float64)
        if arr.ndim == 2:  # several labels: use the last (the "relevant" one by convention)
            arr = arr[:, -1]
        return [float(s) for s in arr]


@register_engine("rerank")
class RerankEngine(Engine):
    """Reranks the top ``depth`` hits of another engine.

    Options: ``engine`` (nested engine spec, required), ``mode`` (``cross-encoder`` or
    ``embedding``), ``model`` (required for cross-encoder; default MiniLM for embedding),
    ``depth`` (100), ``fields`` (title, text), ``batch_size``, ``device``, ``cache``,
    ``cache_dir``, ``max_length`` (cross-encoder input length), ``max_seq_length`` (embedding
    mode: word pieces per text), ``backend`` (embedding mode: ``auto``, ``onnx`` or ``torch``,
    as for the vector engine), ``embedder`` (an Embedder
    instance instead of ``model`` in embedding mode).
    """

    name = "rerank"
    composite = True

    @classmethod
    def member_specs(cls, options: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        engine = options.get("engine")
        return [engine] if isinstance(engine, Mapping) else []

    @classmethod
    def uses_embeddings(cls, options: Mapping[str, Any]) -> bool:
        # a cross-encoder is a sentence-transformers model too; only a hashing embedder in
        # embedding mode needs no model, and then only the first stage may need one
        model = str(options.get("model") or "")
        if options.get("mode") == "embedding" and model.startswith("hashing"):
            return super().uses_embeddings(options)
        return True

    @classmethod
    def with_embedding_model(cls, options: Mapping[str, Any], model: str) -> dict[str, Any]:
        # ``model`` of the rerank engine is the reranking model: the configuration's
        # embedding model goes to the first stage
        engine = options.get("engine")
        if not isinstance(engine, Mapping):
            return dict(options)
        return {**options, "engine": spec_with_embedding_model(engine, model)}

    def __init__(
        self,
        engine: Mapping[str, object] | Engine,
        *,
        mode: RerankMode = "cross-encoder",
        model: str | Path | None = None,
        depth: int = 100,
        fields: Sequence[str] = ("title", "text"),
        batch_size: int = 32,
        device: str | None = None,
        cache: bool = True,
        cache_dir: str | Path | None = None,
        max_length: int = 512,
        max_seq_length: int | None = None,
        backend: str = "auto",
        embedder: Embedder | None = None,
    ) -> None:
        if mode not in ("cross-encoder", "embedding"):
            raise ConfigError(
                "rerank engine option 'mode' must be 'cross-encoder' or 'embedding'", value=mode
            )
        if isinstance(depth, bool) or not isinstance(depth, int) or depth <= 0:
            raise ConfigError(
                "rerank engine option 'depth' must be a positive integer", value=depth
            )
        if mode == "cross-encoder" and model is None:
            raise ConfigError(
                "rerank engine in cross-encoder mode needs a 'model'",
                hint="e.g. model: cross-encoder/ms-marco-MiniLM-L-6-v2 (must be available "
                "locally), or use mode: embedding",
            )
        if isinstance(fields, str) or not fields:
            raise ConfigError("rerank engine option 'fields' must list field names", value=fields)
        self.mode: RerankMode = mode
        self.depth = depth
        self.fields = tuple(fields)
        self._cross: CrossEncoderScorer | None = None
        self._embedder: Embedder | None = None
        self._owns_embedder = embedder is None
        if mode == "cross-encoder":
            self._cross = CrossEncoderScorer(
                str(model), device=device, batch_size=batch_size, max_length=max_length
            )
        else:
            self._embedder = embedder or make_embedder(
                model,
                device=device,
                batch_size=batch_size,
                cache=cache,
                cache_dir=cache_dir,
                max_seq_length=max_seq_length,
                backend=backend,
            )
        self.base = build_engine(engine, "rerank option 'engine'")
        setattr(self, "supported_kinds", self.base.supported_kinds)  # noqa: B010
        setattr(self, "thread_safe", self.base.thread_safe)  # noqa: B010
        self._texts: dict[str, str] = {}
        self._stats_at_index: dict[str, int | float] = embedding_stats(self._embedder)

    def index_stats(self) -> Mapping[str, int | float]:
        """The first stage's counters plus, in embedding mode, the cache hits and misses of
        the documents this reranker embedded since :meth:`index` (at search time)."""
        own = stats_since(embedding_stats(self._embedder), self._stats_at_index)
        return add_stats(self.base.index_stats(), own)

    def search_stats(self) -> Mapping[str, int | float]:
        """The first stage's search counters."""
        return self.base.search_stats()

    def index(self, docs: Iterable[Document]) -> None:
        self._stats_at_index = embedding_stats(self._embedder)
        self._texts = {}
        stream = DocumentStream.of(docs)
        self.base.index(stream.through(self._keeping_texts, count=stream.count))

    def _keeping_texts(self, docs: Iterable[Document]) -> Iterator[Document]:
        """``docs`` as the first stage reads them, keeping each text the reranker scores (one
        pass: a streamed corpus is not read twice, nor held)."""
        for d in docs:
            self._texts[d.id] = VectorEngine.document_text(d, self.fields)
            yield d

    def _search(self, query: Query, k: int) -> list[Hit]:
        hits = self.base.search(query, max(self.depth, k))
        if not hits:
            return []
        missing = [h.doc_id for h in hits if h.doc_id not in self._texts]
        if missing:
            raise EngineError(
                f"rerank: the first-stage engine returned ids that were not indexed through "
                f"the reranker (e.g. {missing[0]!r}); index the corpus with the rerank engine"
            )
        texts = [self._texts[h.doc_id] for h in hits]
        if self._cross is not None:
            scores = self._cross.score(query.text, texts)
        else:
            assert self._embedder is not None
            q = self._embedder.embed_queries([query.text])[0]
            d = self._embedder.embed_documents(texts)
            scores = [float(s) for s in d @ q]
        # stable sort keeps the first stage's order among equal scores
        order = sorted(range(len(hits)), key=lambda i: -scores[i])
        return [Hit(doc_id=hits[i].doc_id, score=scores[i]) for i in order[:k]]

    def close(self) -> None:
        self.base.close()
        cache = getattr(self._embedder, "cache", None)
        if self._owns_embedder and cache is not None:
            cache.close()
