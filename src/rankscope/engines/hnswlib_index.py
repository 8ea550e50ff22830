"""HNSW vector search with hnswlib, the reference implementation of the HNSW paper.

The unit vectors of rankscope's embedder (:mod:`rankscope.engines.vectorstore`) go into an
``hnswlib.Index`` in the ``ip`` space (inner product, the cosine on unit vectors; hnswlib
reports ``1 - ip`` as the distance, turned back into the cosine here). The graph is built with
``m`` links per node and ``ef_construction``, searched with ``ef_search`` (hnswlib uses
``max(ef_search, k)``, which :meth:`~HnswlibEngine.effective_params` reports). With ``threads:
1`` (the default) and a fixed ``seed`` the graph, and so every result, is the same on every run.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rankscope.engines.base import Document, register_engine
from rankscope.engines.embeddings import Matrix
from rankscope.engines.vectorstore import VectorStoreEngine, check_int, wrap_store_error
from rankscope.errors import EngineError
from rankscope.util.extras import import_extra

# Imported where used, so that this module imports without them: hnswlib (the hnswlib extra).


def _import_hnswlib() -> Any:
    return import_extra(
        "hnswlib", "engine 'hnswlib'", "the hnswlib package", "hnswlib", EngineError
    )


@register_engine("hnswlib")
class HnswlibEngine(VectorStoreEngine):
    """hnswlib HNSW over rankscope's embeddings.

    Options: ``m`` (links per node, default 16), ``ef_construction`` (default 200),
    ``ef_search`` (default 10; hnswlib's defaults), ``seed`` (the graph's random levels,
    default 100), ``threads`` (threads building the graph, default 1: a reproducible graph),
    and the embedding options of :class:`~rankscope.engines.vectorstore.VectorStoreEngine`.
    """

    name = "hnswlib"

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        m: int = 16,
        ef_construction: int = 200,
        ef_search: int = 10,
        seed: int = 100,
        threads: int = 1,
        **embedding: Any,
    ) -> None:
        self.m = check_int("hnswlib", "m", m, 2)
        self.ef_construction = check_int("hnswlib", "ef_construction", ef_construction, 1)
        self.ef_search = check_int("hnswlib", "ef_search", ef_search, 1)
        self.seed = check_int("hnswlib", "seed", seed, 0)
        self.threads = check_int("hnswlib", "threads", threads, 1)
        super().__init__(model, **embedding)
        self._index: Any = None

    def _build(self, vectors: Matrix, docs: Sequence[Document]) -> None:
        hnswlib = _import_hnswlib()
        self._index = None
        n = int(vectors.shape[0])
        if n == 0:
            return
        try:
            index = hnswlib.Index(space="ip", dim=int(vectors.shape[1]))
            index.init_index(
                max_elements=n,
                ef_construction=self.ef_construction,
                M=self.m,
                random_seed=self.seed,
            )
            index.add_items(vectors, np.arange(n), num_threads=self.threads)
            index.set_ef(self.ef_search)
        except (RuntimeError, ValueError) as exc:
            raise wrap_store_error("hnswlib", "building the index", exc) from exc
        self._index = index

    def _search_params(self, k: int) -> dict[str, int | float | str | bool]:
        # hnswlib's searchKnn explores max(ef, k) candidates: below k, ef_search does nothing
        return {
            "m": self.m,
            "ef_construction": self.ef_construction,
            "ef_search": max(self.ef_search, k),
            "seed": self.seed,
            "threads": self.threads,
        }

    def _knn(self, vector: Matrix, k: int) -> list[tuple[int, float]]:
        if self._index is None:
            return []
        try:
            rows, distances = self._index.knn_query(vector.reshape(1, -1), k=k, num_threads=1)
        except RuntimeError as exc:  # "cannot return the results": fewer than k reachable
            raise wrap_store_error("hnswlib", f"a search for {k} neighbours", exc) from exc
        return [(int(r), 1.0 - float(d)) for r, d in zip(rows[0], distances[0], strict=True)]

    def _store_bytes(self) -> int | None:
        if self._index is None:
            return 0
        fd, name = tempfile.mkstemp(prefix="rankscope-hnswlib-", suffix=".bin")
        os.close(fd)
        try:
            self._index.save_index(name)
            return os.path.getsize(name)
        finally:
            os.unlink(name)

    def _close_store(self) -> None:
        self._index = None
