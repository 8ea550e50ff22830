"""LanceDB (``lancedb``), embedded: vector search (flat or an IVF / HNSW index), its own
full-text index, and its hybrid query.

One Lance table in a local folder holds each unit's row number, its text (the fields named by
``fields`` joined) and, in the ``vector`` and ``hybrid`` modes, its unit vector from rankscope's
embedder (:mod:`rankscope.engines.vectorstore`: the same cached vectors as every other store).

- ``mode: vector`` (default): nearest neighbours by cosine. ``index: none`` scans every vector
  (exact); ``ivf_flat``, ``ivf_sq``, ``ivf_pq``, ``ivf_hnsw_sq`` and ``ivf_hnsw_pq`` build
  LanceDB's index with ``nlist`` partitions (``num_partitions``), ``pq_m`` sub-vectors and
  ``pq_bits`` bits (PQ), ``m`` and ``ef_construction`` (HNSW); queries scan ``nprobe``
  partitions (``nprobes``), with ``ef_search`` (``ef``, HNSW; ``max(ef_search, k)``, as LanceDB
  refuses a smaller one) and ``refine_factor`` (re-rank
  that many times k candidates on the full vectors). Unset options take LanceDB's defaults.
  A hit's score is ``1 - cosine distance``.
- ``mode: fts``: LanceDB's native full-text index (BM25) over the text, ``stem`` and
  ``remove_stop_words`` as options; the query text is one match query (no query syntax). No
  embedding model is loaded.
- ``mode: hybrid``: LanceDB's hybrid query (the vector search and the full-text search fused by
  its ``RRFReranker``, ``rrf_k`` = 60); a hit's score is LanceDB's relevance score.

LanceDB's Rust logging is set to errors only (``LANCEDB_LOG=error``, unless already set), or
every query would print a deprecation notice.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from rankscope.engines.base import Document, Hit, Query, register_engine
from rankscope.engines.embeddings import Matrix
from rankscope.engines.vectorstore import (
    StoreFolder,
    VectorStoreEngine,
    check_choice,
    check_int,
    folder_bytes,
    wrap_store_error,
)
from rankscope.errors import EngineError
from rankscope.util.extras import import_extra

# Imported where used, so that this module imports without them: lancedb (the lancedb extra), and
# pyarrow (when documents are loaded).

MODES = ("vector", "fts", "hybrid")
INDEX_KINDS = ("none", "ivf_flat", "ivf_sq", "ivf_pq", "ivf_hnsw_sq", "ivf_hnsw_pq")
_TABLE = "rankscope"


def _import_lancedb() -> Any:
    os.environ.setdefault("LANCEDB_LOG", "error")
    return import_extra(
        "lancedb", "engine 'lancedb'", "the lancedb package", "lancedb", EngineError
    )


def _optional(name: str, value: int | None, low: int = 1) -> int | None:
    return None if value is None else check_int("lancedb", name, value, low)


@register_engine("lancedb")
class LanceDbEngine(VectorStoreEngine):
    """LanceDB vector, full-text or hybrid search in a local folder.

    Options: ``mode`` (``vector``, ``fts``, ``hybrid``), ``path`` (the folder; default a
    temporary one, removed on close), ``index`` (``none`` default: exact), ``nlist``,
    ``pq_m``, ``pq_bits``, ``m``, ``ef_construction``, ``nprobe``, ``ef_search``,
    ``refine_factor``, ``stem`` (default true), ``remove_stop_words`` (default true),
    ``rrf_k`` (default 60), and the embedding options of
    :class:`~rankscope.engines.vectorstore.VectorStoreEngine` (not used by ``mode: fts``).
    """

    name = "lancedb"
    option_choices: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "mode": MODES,
        "index": INDEX_KINDS,
    }

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        mode: str = "vector",
        path: str | Path | None = None,
        index: str = "none",
        nlist: int | None = None,
        pq_m: int | None = None,
        pq_bits: int = 8,
        m: int = 20,
        ef_construction: int = 300,
        nprobe: int | None = None,
        ef_search: int | None = None,
        refine_factor: int | None = None,
        stem: bool = True,
        remove_stop_words: bool = True,
        rrf_k: int = 60,
        **embedding: Any,
    ) -> None:
        self.mode = check_choice("lancedb", "mode", mode, MODES)
        self.kind = check_choice("lancedb", "index", index, INDEX_KINDS)
        self.nlist = _optional("nlist", nlist)
        self.pq_m = _optional("pq_m", pq_m)
        self.pq_bits = check_int("lancedb", "pq_bits", pq_bits, 1, 8)
        self.m = check_int("lancedb", "m", m, 2)
        self.ef_construction = check_int("lancedb", "ef_construction", ef_construction, 1)
        self.nprobe = _optional("nprobe", nprobe)
        self.ef_search = _optional("ef_search", ef_search)
        self.refine_factor = _optional("refine_factor", refine_factor)
        self.stem = bool(stem)
        self.remove_stop_words = bool(remove_stop_words)
        self.rrf_k = check_int("lancedb", "rrf_k", rrf_k, 1)
        super().__init__(model, **embedding)
        self._folder = StoreFolder.of(path, "lancedb")
        self._db: Any = None
        self._table: Any = None

    @classmethod
    def takes_embedding_model(cls, options: Mapping[str, Any]) -> bool:
        return bool(options.get("mode", "vector") != "fts")

    @classmethod
    def uses_embeddings(cls, options: Mapping[str, Any]) -> bool:
        if options.get("mode", "vector") == "fts":
            return False
        return super().uses_embeddings(options)

    @classmethod
    def with_embedding_model(cls, options: Mapping[str, Any], model: str) -> dict[str, Any]:
        if not cls.takes_embedding_model(options):
            return dict(options)
        return super().with_embedding_model(options, model)

    # -- indexing -----------------------------------------------------------------------------
    def index(self, docs: Iterable[Document]) -> None:
        if self.mode != "fts":
            super().index(docs)
            return
        units = list(docs)
        seen: set[str] = set()
        for d in units:
            if d.id in seen:
                raise EngineError(f"lancedb engine: duplicate document id {d.id!r}")
            seen.add(d.id)
        self._ids = [d.id for d in units]
        started = time.perf_counter()
        self._build(np.zeros((len(units), 0), dtype=np.float32), units)
        self._build_seconds = time.perf_counter() - started
        self._index_bytes = self._store_bytes()

    def _connect(self) -> Any:
        if self._db is None:
            lancedb = _import_lancedb()
            self._folder.path.mkdir(parents=True, exist_ok=True)
            self._db = lancedb.connect(str(self._folder.path))
        return self._db

    def _build(self, vectors: Matrix, docs: Sequence[Document]) -> None:
        import pyarrow as pa

        db = self._connect()
        self._table = None
        if not docs:
            return
        columns: dict[str, Any] = {
            "row": pa.array(range(len(docs)), pa.int64()),
            "text": pa.array([self.document_text(d, self.fields) for d in docs], pa.string()),
        }
        if self.mode != "fts":
            dim = int(vectors.shape[1])
            flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).ravel())
            columns["vector"] = pa.FixedSizeListArray.from_arrays(flat, dim)
        try:
            table = db.create_table(_TABLE, pa.table(columns), mode="overwrite")
            if self.mode != "fts" and self.kind != "none":
                table.create_index("vector", config=self._vector_index_config())
            if self.mode != "vector":
                from lancedb.index import FTS

                fts = FTS(stem=self.stem, remove_stop_words=self.remove_stop_words)
                table.create_index("text", config=fts)
        except Exception as exc:  # lance raises ValueError/RuntimeError with its reason
            what = "the index" if self.kind == "none" else f"the {self.kind} index"
            raise wrap_store_error("lancedb", f"building {what}", exc) from exc
        self._table = table

    def _vector_index_config(self) -> Any:
        from lancedb import index as li

        common: dict[str, Any] = {"distance_type": "cosine"}
        if self.nlist is not None:
            common["num_partitions"] = self.nlist
        pq: dict[str, Any] = {"num_bits": self.pq_bits}
        if self.pq_m is not None:
            pq["num_sub_vectors"] = self.pq_m
        hnsw: dict[str, Any] = {"m": self.m, "ef_construction": self.ef_construction}
        if self.kind == "ivf_flat":
            return li.IvfFlat(**common)
        if self.kind == "ivf_sq":
            return li.IvfSq(**common)
        if self.kind == "ivf_pq":
            return li.IvfPq(**common, **pq)
        if self.kind == "ivf_hnsw_sq":
            return li.HnswSq(**common, **hnsw)
        return li.HnswPq(**common, **pq, **hnsw)

    # -- searching ----------------------------------------------------------------------------
    def _vector_query(self, builder: Any, k: int) -> Any:
        if self.nprobe is not None:
            builder = builder.nprobes(self.nprobe)
        if self.ef_search is not None:
            # LanceDB refuses ef < k (hnswlib searches with max(ef, k) itself; faiss does not)
            builder = builder.ef(max(self.ef_search, k))
        if self.refine_factor is not None:
            builder = builder.refine_factor(self.refine_factor)
        return builder

    def _search_params(self, k: int) -> dict[str, int | float | str | bool]:
        """The vector search's settings (unset ones are LanceDB's defaults, recorded as
        ``"default"``); the full-text side has its own options."""
        params: dict[str, int | float | str | bool] = {"mode": self.mode}
        if self.mode != "vector":
            params.update(stem=self.stem, remove_stop_words=self.remove_stop_words)
        if self.mode == "hybrid":
            params["rrf_k"] = self.rrf_k
        if self.mode == "fts":
            return params
        if self.kind == "none":
            params["search"] = "exact"
            return params
        params["index"] = self.kind
        params["nlist"] = "default" if self.nlist is None else self.nlist
        if "pq" in self.kind:
            params["pq_m"] = "default" if self.pq_m is None else self.pq_m
            params["pq_bits"] = self.pq_bits
        if "hnsw" in self.kind:
            params.update(m=self.m, ef_construction=self.ef_construction)
            params["ef_search"] = "default" if self.ef_search is None else max(self.ef_search, k)
        params["nprobe"] = "default" if self.nprobe is None else self.nprobe
        if self.refine_factor is not None:
            params["refine_factor"] = self.refine_factor
        return params

    def _search(self, query: Query, k: int) -> list[Hit]:
        if self.mode == "vector":
            return super()._search(query, k)
        if self._table is None or not query.text.strip():
            return []
        k = min(k, len(self._ids))
        try:
            if self.mode == "fts":
                from lancedb import query as lq

                # typed as a dataclass with every field required; the library gives defaults
                match: Any = lq.MatchQuery
                found = (
                    self._table.search(match(query.text, "text"), query_type="fts")
                    .limit(k)
                    .select(["row", "_score"])
                    .to_arrow()
                )
                scores = found.column("_score").to_pylist()
            else:
                vector = self._query_vector(query.text)
                if vector is None:
                    return []
                from lancedb.rerankers import RRFReranker

                builder = self._table.search(query_type="hybrid", vector_column_name="vector")
                builder = self._vector_query(builder.vector(vector).text(query.text), k)
                found = (
                    builder.limit(k).rerank(RRFReranker(K=self.rrf_k)).select(["row"]).to_arrow()
                )
                scores = found.column("_relevance_score").to_pylist()
        except Exception as exc:
            raise wrap_store_error("lancedb", f"a {self.mode} query", exc) from exc
        rows = found.column("row").to_pylist()
        ranked = sorted(enumerate(zip(rows, scores, strict=True)), key=lambda p: (-p[1][1], p[0]))
        return [Hit(self._ids[int(r)], float(s)) for _, (r, s) in ranked[:k]]

    def _knn(self, vector: Matrix, k: int) -> list[tuple[int, float]]:
        if self._table is None:
            return []
        builder = self._table.search(vector, vector_column_name="vector").distance_type("cosine")
        try:
            found = self._vector_query(builder, k).limit(k).select(["row", "_distance"]).to_arrow()
        except Exception as exc:
            raise wrap_store_error("lancedb", "a vector query", exc) from exc
        rows = found.column("row").to_pylist()
        distances = found.column("_distance").to_pylist()
        return [(int(r), 1.0 - float(d)) for r, d in zip(rows, distances, strict=True)]

    def exact_neighbours(self, query: Query, k: int) -> list[Hit] | None:
        """Exact neighbours in the ``vector`` mode; None in the others (not a vector search
        alone: nothing to compare)."""
        if self.mode != "vector":
            return None
        return super().exact_neighbours(query, k)

    def _store_bytes(self) -> int | None:
        return folder_bytes(self._folder.path)

    def _close_store(self) -> None:
        self._table = None
        self._db = None
        self._folder.remove()
