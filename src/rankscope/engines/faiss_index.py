"""Vector search with faiss (``faiss-cpu``): Flat, HNSW, IVF-Flat and IVF-PQ indexes.

The unit vectors of rankscope's embedder (:mod:`rankscope.engines.vectorstore`) are searched
by inner product, which on unit vectors is the cosine. Index kinds:

- ``flat``: exact search (``IndexFlatIP``);
- ``hnsw``: ``IndexHNSWFlat`` with ``m`` links per node, ``ef_construction`` and ``ef_search``;
- ``ivf_flat``: ``IndexIVFFlat``, ``nlist`` k-means cells (trained on the corpus vectors), of
  which ``nprobe`` are scanned per query;
- ``ivf_pq``: ``IndexIVFPQ``: the same cells, vectors compressed to ``pq_m`` sub-quantizers of
  ``pq_bits`` bits; scores are then the compressed vectors' approximate cosines.

IVF needs at least ``nlist`` vectors to train (and PQ at least ``2 ** pq_bits``); a smaller
corpus is refused with the numbers, never indexed otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from rankscope.engines.base import Document, register_engine
from rankscope.engines.embeddings import Matrix
from rankscope.engines.vectorstore import (
    VectorStoreEngine,
    check_choice,
    check_int,
    wrap_store_error,
)
from rankscope.errors import ConfigError, EngineError
from rankscope.util.extras import import_extra

# Imported where used, so that this module imports without them: faiss (the faiss extra).

INDEX_KINDS = ("flat", "hnsw", "ivf_flat", "ivf_pq")


def _import_faiss() -> Any:
    return import_extra("faiss", "engine 'faiss'", "the faiss-cpu package", "faiss", EngineError)


@register_engine("faiss")
class FaissEngine(VectorStoreEngine):
    """faiss over rankscope's embeddings (cosine as inner product of unit vectors).

    Options: ``index`` (``flat``, ``hnsw``, ``ivf_flat``, ``ivf_pq``; default ``hnsw``),
    ``m`` (HNSW links per node, default 32), ``ef_construction`` (default 40) and
    ``ef_search`` (default 16; faiss's defaults), ``nlist`` (IVF cells; default
    ``round(4 * sqrt(n))``, at most n), ``nprobe`` (cells scanned per query, default 1),
    ``pq_m`` (PQ sub-quantizers, must divide the dimension; default dimension / 8), ``pq_bits``
    (default 8), ``threads`` (faiss's OpenMP threads; default: faiss's own), and the embedding
    options of :class:`~rankscope.engines.vectorstore.VectorStoreEngine`.
    """

    name = "faiss"
    option_choices: ClassVar[Mapping[str, tuple[str, ...]]] = {"index": INDEX_KINDS}
    thread_safe = True  # faiss indexes are safe to search from several threads

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        index: str = "hnsw",
        m: int = 32,
        ef_construction: int = 40,
        ef_search: int = 16,
        nlist: int | None = None,
        nprobe: int = 1,
        pq_m: int | None = None,
        pq_bits: int = 8,
        threads: int | None = None,
        **embedding: Any,
    ) -> None:
        self.kind = check_choice("faiss", "index", index, INDEX_KINDS)
        self.m = check_int("faiss", "m", m, 2)
        self.ef_construction = check_int("faiss", "ef_construction", ef_construction, 1)
        self.ef_search = check_int("faiss", "ef_search", ef_search, 1)
        self.nlist = None if nlist is None else check_int("faiss", "nlist", nlist, 1)
        self.nprobe = check_int("faiss", "nprobe", nprobe, 1)
        self.pq_m = None if pq_m is None else check_int("faiss", "pq_m", pq_m, 1)
        self.pq_bits = check_int("faiss", "pq_bits", pq_bits, 1, 16)
        self.threads = None if threads is None else check_int("faiss", "threads", threads, 1)
        super().__init__(model, **embedding)
        self._index: Any = None
        self._quantizer: Any = None
        self._nlist_built: int | None = None
        self._pq_m_built: int | None = None

    def _build(self, vectors: Matrix, docs: Sequence[Document]) -> None:
        faiss = _import_faiss()
        if self.threads is not None:
            faiss.omp_set_num_threads(self.threads)
        self._index = None
        n = int(vectors.shape[0])
        if n == 0:
            return
        dim = int(vectors.shape[1])
        metric = faiss.METRIC_INNER_PRODUCT
        try:
            if self.kind == "flat":
                index = faiss.IndexFlatIP(dim)
            elif self.kind == "hnsw":
                index = faiss.IndexHNSWFlat(dim, self.m, metric)
                index.hnsw.efConstruction = self.ef_construction
            else:
                nlist = self._nlist_built = self._nlist(n)
                quantizer = faiss.IndexFlatIP(dim)
                if self.kind == "ivf_flat":
                    index = faiss.IndexIVFFlat(quantizer, dim, nlist, metric)
                else:
                    pq_m = self._pq_m_built = self._pq_m(dim, n)
                    index = faiss.IndexIVFPQ(quantizer, dim, nlist, pq_m, self.pq_bits, metric)
                self._train(index, vectors, nlist)
                index.nprobe = min(self.nprobe, nlist)
                # faiss keeps a reference to the quantizer only on the C++ side
                self._quantizer = quantizer
            index.add(vectors)
        except RuntimeError as exc:
            raise wrap_store_error("faiss", f"building the {self.kind} index", exc) from exc
        if self.kind == "hnsw":
            index.hnsw.efSearch = self.ef_search
        self._index = index

    def _train(self, index: Any, vectors: Matrix, nlist: int) -> None:
        """Train the IVF cells (and PQ codebooks). faiss's k-means prints "please provide at
        least N training points" to stderr, once per training and into any progress bar,
        whenever it gets fewer than 39 points per centroid; the same finding goes into the
        configuration's notes instead (the threshold only decides the message, never the
        result)."""
        n = int(vectors.shape[0])
        wanted = [("IVF k-means", nlist, index.cp)]
        if self.kind == "ivf_pq":
            wanted.append(("PQ codebooks", 2**self.pq_bits, index.pq.cp))
        for what, centroids, params in wanted:
            least = centroids * int(params.min_points_per_centroid)
            if n < least:
                self._notes.append(
                    f"faiss {what}: {centroids:,} centroids trained on {n:,} vectors; faiss "
                    f"asks for at least {least:,} training points"
                )
            params.min_points_per_centroid = 0
        index.train(vectors)

    def _search_params(self, k: int) -> dict[str, int | float | str | bool]:
        if self.kind == "flat":
            return {"index": "flat", "search": "exact"}
        if self.kind == "hnsw":
            # faiss searches with efSearch as set, also below k: a search may return fewer
            # than k hits
            return {
                "index": "hnsw",
                "m": self.m,
                "ef_construction": self.ef_construction,
                "ef_search": self.ef_search,
            }
        params: dict[str, int | float | str | bool] = {"index": self.kind}
        if self._nlist_built is not None:
            params["nlist"] = self._nlist_built
            params["nprobe"] = min(self.nprobe, self._nlist_built)
        if self.kind == "ivf_pq":
            if self._pq_m_built is not None:
                params["pq_m"] = self._pq_m_built
            params["pq_bits"] = self.pq_bits
        return params

    def _nlist(self, n: int) -> int:
        nlist = self.nlist if self.nlist is not None else max(1, min(n, round(4 * math.sqrt(n))))
        if nlist > n:
            raise ConfigError(
                f"faiss engine: IVF with nlist={nlist} needs at least {nlist} vectors to train "
                f"its cells; the corpus has {n}",
                value=nlist,
                hint="lower nlist, or use index: flat or hnsw for a corpus this small",
            )
        return nlist

    def _pq_m(self, dim: int, n: int) -> int:
        pq_m = self.pq_m if self.pq_m is not None else max(1, dim // 8)
        if dim % pq_m:
            raise ConfigError(
                f"faiss engine option 'pq_m' must divide the vector dimension {dim}",
                value=pq_m,
                hint=f"e.g. pq_m: {max(1, dim // 8)}",
            )
        if n < 2**self.pq_bits:
            raise ConfigError(
                f"faiss engine: PQ with pq_bits={self.pq_bits} trains {2**self.pq_bits} "
                f"centroids per sub-quantizer and needs at least that many vectors; the corpus "
                f"has {n}",
                value=self.pq_bits,
                hint="lower pq_bits, or use index: ivf_flat, hnsw or flat",
            )
        return pq_m

    def _knn(self, vector: Matrix, k: int) -> list[tuple[int, float]]:
        if self._index is None:
            return []
        scores, rows = self._index.search(vector.reshape(1, -1), k)
        return [(int(r), float(s)) for r, s in zip(rows[0], scores[0], strict=True) if int(r) >= 0]

    def _store_bytes(self) -> int | None:
        if self._index is None:
            return 0
        faiss = _import_faiss()
        return int(np.asarray(faiss.serialize_index(self._index)).nbytes)

    def _close_store(self) -> None:
        self._index = None
        self._quantizer = None
