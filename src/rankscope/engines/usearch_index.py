"""HNSW vector search with USearch (``usearch``), optionally on quantised vectors.

The unit vectors of rankscope's embedder (:mod:`rankscope.engines.vectorstore`) go into a
``usearch.index.Index`` with the cosine metric (USearch reports ``1 - cos`` as the distance,
turned back into the cosine here). ``m`` is USearch's ``connectivity``, ``ef_construction`` its
``expansion_add`` and ``ef_search`` its ``expansion_search``; ``dtype`` stores the vectors as
``f32``, ``f16``, ``bf16`` or ``i8``; ``exact: true`` scans every vector instead of walking the
graph (USearch's own brute force).
"""

from __future__ import annotations

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
from rankscope.errors import EngineError
from rankscope.util.extras import import_extra

# Imported where used, so that this module imports without them: usearch (the usearch extra).

DTYPES = ("f32", "f16", "bf16", "i8")


def _import_usearch() -> Any:
    return import_extra(
        "usearch.index", "engine 'usearch'", "the usearch package", "usearch", EngineError
    )


@register_engine("usearch")
class UsearchEngine(VectorStoreEngine):
    """USearch HNSW over rankscope's embeddings.

    Options: ``m`` (connectivity, default 16), ``ef_construction`` (expansion_add, default
    128), ``ef_search`` (expansion_search, default 64; USearch's defaults), ``dtype``
    (``f32`` default, ``f16``, ``bf16``, ``i8``), ``exact`` (brute force, default false),
    ``threads`` (threads adding vectors; default 1, a reproducible graph), and the embedding
    options of :class:`~rankscope.engines.vectorstore.VectorStoreEngine`.
    """

    name = "usearch"
    option_choices: ClassVar[Mapping[str, tuple[str, ...]]] = {"dtype": DTYPES}
    thread_safe = True  # USearch indexes are safe to search from several threads

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        m: int = 16,
        ef_construction: int = 128,
        ef_search: int = 64,
        dtype: str = "f32",
        exact: bool = False,
        threads: int = 1,
        **embedding: Any,
    ) -> None:
        self.m = check_int("usearch", "m", m, 2)
        self.ef_construction = check_int("usearch", "ef_construction", ef_construction, 1)
        self.ef_search = check_int("usearch", "ef_search", ef_search, 1)
        self.dtype = check_choice("usearch", "dtype", dtype, DTYPES)
        self.exact = bool(exact)
        self.threads = check_int("usearch", "threads", threads, 1)
        super().__init__(model, **embedding)
        self._index: Any = None

    def _build(self, vectors: Matrix, docs: Sequence[Document]) -> None:
        usearch = _import_usearch()
        self._index = None
        n = int(vectors.shape[0])
        if n == 0:
            return
        try:
            index = usearch.Index(
                ndim=int(vectors.shape[1]),
                metric="cos",
                dtype=self.dtype,
                connectivity=self.m,
                expansion_add=self.ef_construction,
                expansion_search=self.ef_search,
            )
            index.add(np.arange(n, dtype=np.uint64), vectors, threads=self.threads)
        except (RuntimeError, ValueError) as exc:
            raise wrap_store_error("usearch", "building the index", exc) from exc
        self._index = index

    def _search_params(self, k: int) -> dict[str, int | float | str | bool]:
        if self.exact:
            return {"dtype": self.dtype, "search": "exact"}
        return {
            "dtype": self.dtype,
            "m": self.m,
            "ef_construction": self.ef_construction,
            # USearch widens its search to max(expansion_search, k)
            "ef_search": max(self.ef_search, k),
            "threads": self.threads,
        }

    def _knn(self, vector: Matrix, k: int) -> list[tuple[int, float]]:
        if self._index is None:
            return []
        found = self._index.search(vector, k, threads=1, exact=self.exact)
        return [(int(r), 1.0 - float(d)) for r, d in zip(found.keys, found.distances, strict=True)]

    def _store_bytes(self) -> int | None:
        return 0 if self._index is None else int(self._index.serialized_length)

    def _close_store(self) -> None:
        self._index = None
