"""Vector search with Qdrant's Python client in local mode (``qdrant-client``, ``path=``).

Local mode keeps the collection in a folder and runs in the Python process, offline, without a
Qdrant server. It searches **exactly** (a brute-force scan in numpy): the HNSW settings
``m``, ``ef_construction`` and ``ef_search`` are given to the collection as a Qdrant server
would take them, and recorded, but local mode does not build or use an HNSW graph (the client
itself says so: "Local mode performs exact (brute-force) search"). ``index_stats()`` reports
``exact_search: 1``. Numbers from it are a Qdrant server's quality at perfect recall, not its
speed.

The unit vectors of rankscope's embedder (:mod:`rankscope.engines.vectorstore`) are stored under the
cosine distance; a hit's score is Qdrant's cosine similarity.

Local mode cannot batch its writes: whatever the batch size of ``upload_collection``, it stores
each point in its SQLite file in a transaction of its own, and each commit waits for the disk
(measured: 1,308 points of 384 dimensions took 45.5 s). While it builds, the engine turns
SQLite's ``synchronous`` off on that connection (the commits reach the file, without a wait
for the disk each; 2.6 s for the same points), and back to ``FULL`` after.
"""

from __future__ import annotations

import contextlib
import sqlite3
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from rankscope.engines.base import Document, register_engine
from rankscope.engines.embeddings import Matrix
from rankscope.engines.vectorstore import (
    StoreFolder,
    VectorStoreEngine,
    check_int,
    folder_bytes,
    wrap_store_error,
)
from rankscope.errors import ConfigError, EngineError
from rankscope.util.extras import import_extra

# Imported where used, so that this module imports without them: qdrant-client (the qdrant extra).


def _import_qdrant() -> Any:
    return import_extra(
        "qdrant_client", "engine 'qdrant'", "the qdrant-client package", "qdrant", EngineError
    )


@contextlib.contextmanager
def _unsynced(client: Any, collection: str) -> Iterator[None]:
    """Local mode's SQLite connection of ``collection`` with ``synchronous=OFF`` meanwhile
    (nothing when the client is not local mode or keeps its points elsewhere)."""
    storage = getattr(getattr(client, "_client", None), "collections", {}).get(collection)
    connection = getattr(getattr(storage, "storage", None), "storage", None)
    if not isinstance(connection, sqlite3.Connection):
        yield
        return
    connection.execute("PRAGMA synchronous=OFF")
    try:
        yield
    finally:
        connection.execute("PRAGMA synchronous=FULL")


@register_engine("qdrant")
class QdrantEngine(VectorStoreEngine):
    """Qdrant local mode (exact search) over rankscope's embeddings.

    Options: ``path`` (the folder; default a temporary one, removed on close), ``collection``
    (default ``rankscope``), ``m`` (default 16), ``ef_construction`` (default 100) and
    ``ef_search`` (default: none, Qdrant's) (recorded; local mode searches exactly), and the
    embedding options of :class:`~rankscope.engines.vectorstore.VectorStoreEngine`.
    """

    name = "qdrant"

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        path: str | Path | None = None,
        collection: str = "rankscope",
        m: int = 16,
        ef_construction: int = 100,
        ef_search: int | None = None,
        **embedding: Any,
    ) -> None:
        self.m = check_int("qdrant", "m", m, 2)
        self.ef_construction = check_int("qdrant", "ef_construction", ef_construction, 4)
        self.ef_search = (
            None if ef_search is None else check_int("qdrant", "ef_search", ef_search, 1)
        )
        if not isinstance(collection, str) or not collection:
            raise ConfigError("qdrant engine option 'collection' must be a name", value=collection)
        self.collection = collection
        super().__init__(model, **embedding)
        self._folder = StoreFolder.of(path, "qdrant")
        self._client: Any = None
        self._filled = False

    def _connect(self) -> Any:
        if self._client is None:
            qdrant = _import_qdrant()
            self._folder.path.mkdir(parents=True, exist_ok=True)
            self._client = qdrant.QdrantClient(path=str(self._folder.path))
        return self._client

    def _build(self, vectors: Matrix, docs: Sequence[Document]) -> None:
        from qdrant_client import models

        client = self._connect()
        self._filled = False
        try:
            if client.collection_exists(self.collection):
                client.delete_collection(self.collection)
            n = int(vectors.shape[0])
            if n == 0:
                return
            client.create_collection(
                self.collection,
                vectors_config=models.VectorParams(
                    size=int(vectors.shape[1]), distance=models.Distance.COSINE
                ),
                hnsw_config=models.HnswConfigDiff(m=self.m, ef_construct=self.ef_construction),
            )
            with _unsynced(client, self.collection):
                client.upload_collection(self.collection, vectors=vectors, ids=list(range(n)))
        except Exception as exc:  # qdrant-client raises its own error types and ValueError
            raise wrap_store_error("qdrant", "building the collection", exc) from exc
        self._filled = True

    def _search_params(self, k: int) -> dict[str, int | float | str | bool]:
        return {"search": "exact"}  # local mode ignores the HNSW settings

    def _knn(self, vector: Matrix, k: int) -> list[tuple[int, float]]:
        if not self._filled:
            return []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "local mode performs exact search"
            found = self._connect().query_points(
                self.collection, query=vector.tolist(), limit=k, with_payload=False
            )
        return [(int(p.id), float(p.score)) for p in found.points]

    def _store_bytes(self) -> int | None:
        return folder_bytes(self._folder.path)

    def _store_stats(self) -> dict[str, int | float]:
        return {"exact_search": 1}

    def _close_store(self) -> None:
        client, self._client = self._client, None
        self._filled = False
        if client is not None:
            client.close()
        self._folder.remove()
