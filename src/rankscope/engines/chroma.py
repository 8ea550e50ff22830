"""Vector search with Chroma (``chromadb``): a persistent client on a local folder, offline.

The unit vectors of rankscope's embedder (:mod:`rankscope.engines.vectorstore`) are added to one
collection (no Chroma embedding function: Chroma never embeds or downloads anything) whose HNSW
index is configured by ``space`` (``cosine``, ``ip`` or ``l2``), ``m`` (Chroma's
``max_neighbors``), ``ef_construction`` and ``ef_search``. A hit's score is the cosine
similarity, whatever the space (``cosine`` and ``ip``: 1 - distance; ``l2``: 1 - distance / 2,
as Chroma's l2 is the squared distance).

Each document's title and extra fields are stored as Chroma metadata, so ``where`` (a Chroma
metadata filter such as ``{"section": "api"}`` or ``{"$and": [...]}``) restricts every query to
the matching documents: filtered search, as a RAG application with access rules runs it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from rankscope.engines.base import Document, register_engine
from rankscope.engines.embeddings import Matrix
from rankscope.engines.vectorstore import (
    StoreFolder,
    VectorStoreEngine,
    check_choice,
    check_int,
    folder_bytes,
    wrap_store_error,
)
from rankscope.errors import ConfigError, EngineError
from rankscope.util.extras import import_extra

# Imported where used, so that this module imports without them: chromadb (the chroma extra).

SPACES = ("cosine", "ip", "l2")


def _import_chromadb() -> Any:
    return import_extra(
        "chromadb", "engine 'chroma'", "the chromadb package", "chroma", EngineError
    )


@register_engine("chroma")
class ChromaEngine(VectorStoreEngine):
    """Chroma's HNSW over rankscope's embeddings, in a persistent local folder.

    Options: ``path`` (the folder; default a temporary one, removed on close), ``collection``
    (default ``rankscope``), ``space`` (``cosine`` default, ``ip``, ``l2``), ``m`` (default
    16), ``ef_construction`` (default 100), ``ef_search`` (default 100; Chroma's defaults),
    ``where`` (a metadata filter applied to every query), and the embedding options of
    :class:`~rankscope.engines.vectorstore.VectorStoreEngine`.
    """

    name = "chroma"
    option_choices: ClassVar[Mapping[str, tuple[str, ...]]] = {"space": SPACES}

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        path: str | Path | None = None,
        collection: str = "rankscope",
        space: str = "cosine",
        m: int = 16,
        ef_construction: int = 100,
        ef_search: int = 100,
        where: Mapping[str, Any] | None = None,
        **embedding: Any,
    ) -> None:
        self.space = check_choice("chroma", "space", space, SPACES)
        self.m = check_int("chroma", "m", m, 2)
        self.ef_construction = check_int("chroma", "ef_construction", ef_construction, 1)
        self.ef_search = check_int("chroma", "ef_search", ef_search, 1)
        if where is not None and not isinstance(where, Mapping):
            raise ConfigError(
                "chroma engine option 'where' must be a mapping (a Chroma metadata filter)",
                value=where,
                hint='e.g. where: {section: api} or where: {"$and": [{a: 1}, {b: 2}]}',
            )
        self.where = None if not where else dict(where)
        if not isinstance(collection, str) or not collection:
            raise ConfigError("chroma engine option 'collection' must be a name", value=collection)
        self.collection_name = collection
        super().__init__(model, **embedding)
        self._folder = StoreFolder.of(path, "chroma")
        self._client: Any = None
        self._collection: Any = None

    def _connect(self) -> Any:
        if self._client is None:
            chromadb = _import_chromadb()
            from chromadb.config import Settings

            self._folder.path.mkdir(parents=True, exist_ok=True)
            self._client = chromadb.PersistentClient(
                path=str(self._folder.path), settings=Settings(anonymized_telemetry=False)
            )
        return self._client

    def _build(self, vectors: Matrix, docs: Sequence[Document]) -> None:
        client = self._connect()
        try:
            if any(c.name == self.collection_name for c in client.list_collections()):
                client.delete_collection(self.collection_name)
            self._collection = client.create_collection(
                self.collection_name,
                embedding_function=None,
                configuration={
                    "hnsw": {
                        "space": self.space,
                        "max_neighbors": self.m,
                        "ef_construction": self.ef_construction,
                        "ef_search": self.ef_search,
                    }
                },
            )
            step = max(1, int(client.get_max_batch_size()))
            for lo in range(0, len(docs), step):
                part = docs[lo : lo + step]
                self._collection.add(
                    ids=[str(lo + i) for i in range(len(part))],
                    embeddings=vectors[lo : lo + step],
                    metadatas=[_metadata(d) for d in part],
                )
        except Exception as exc:  # chromadb raises its own error types and ValueError
            raise wrap_store_error("chroma", "building the collection", exc) from exc

    def _search_params(self, k: int) -> dict[str, int | float | str | bool]:
        params: dict[str, int | float | str | bool] = {
            "space": self.space,
            "m": self.m,
            "ef_construction": self.ef_construction,
            # Chroma's HNSW (hnswlib) explores max(ef, k) candidates
            "ef_search": max(self.ef_search, k),
        }
        if self.where is not None:
            params["where"] = json.dumps(self.where, sort_keys=True, default=repr)
        return params

    def _knn(self, vector: Matrix, k: int) -> list[tuple[int, float]]:
        if self._collection is None:
            return []
        try:
            found = self._collection.query(
                query_embeddings=vector.reshape(1, -1),
                n_results=k,
                where=self.where,
                include=["distances"],
            )
        except Exception as exc:  # a bad filter is reported by chromadb at query time
            raise wrap_store_error("chroma", "a query", exc) from exc
        rows = found["ids"][0]
        distances = found["distances"][0]
        return [(int(r), self._cosine(float(d))) for r, d in zip(rows, distances, strict=True)]

    def _cosine(self, distance: float) -> float:
        return 1.0 - distance / 2.0 if self.space == "l2" else 1.0 - distance

    def _store_bytes(self) -> int | None:
        return folder_bytes(self._folder.path)

    def _close_store(self) -> None:
        self._collection = None
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):  # closing is best effort: the folder goes anyway
                client.close()
        self._folder.remove()


def _metadata(doc: Document) -> dict[str, str] | None:
    """What Chroma stores with a vector for ``where`` filters: the title and extra fields."""
    meta = {k: v for k, v in doc.fields.items() if isinstance(v, str)}
    if doc.title:
        meta["title"] = doc.title
    return meta or None
