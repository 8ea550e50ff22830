"""Vector search with Milvus Lite (``milvus-lite`` + ``pymilvus``): Milvus in a local file.

``pymilvus.MilvusClient`` given a local ``.db`` path starts Milvus Lite, offline: since
milvus-lite 3, a pure-Python Milvus (its gRPC API served from a thread of this process on a
loopback port, its data in that folder). The rows are inserted, then **flushed**: Milvus Lite
seals them into a segment and builds the index on it (with faiss). Unflushed rows stay in a
growing segment that every search scans exhaustively, after rebuilding an in-memory snapshot
of it: exact, whatever the index, and slow (measured on 1,000 hashing-embedder vectors, 50
queries: see bench/VECTOR_STORES.md). Flushed, ``index`` (``flat``, ``hnsw``, ``ivf_flat``) is
what it searches with: ``flat`` exactly; ``hnsw`` (faiss's, with ``m``, ``ef_construction``,
``ef_search`` as set, also below k) and ``ivf_flat`` (``nlist`` cells, at most one per vector;
``nprobe`` scanned) approximately. Milvus Lite (3.2) builds no ``ivf_pq`` index: refused.
pymilvus sends build parameters as separate keys, which Milvus Lite drops (it builds with its
defaults: M 16, efConstruction 200, nlist 128); they are sent under ``params``, which it reads.

The unit vectors of rankscope's embedder (:mod:`rankscope.engines.vectorstore`) are stored under the
``COSINE`` metric; a hit's score is Milvus's cosine similarity.
"""

from __future__ import annotations

import contextlib
import re
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

# Imported where used, so that this module imports without them: pymilvus and milvus-lite (the
# milvus extra).

INDEX_KINDS = ("flat", "hnsw", "ivf_flat", "ivf_pq")
#: the index kinds Milvus Lite builds (3.2: IVF_PQ fails in its background build)
LITE_KINDS = ("flat", "hnsw", "ivf_flat")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,254}")
#: rows per insert call
_BATCH = 1000


def _import_pymilvus() -> Any:
    return import_extra(
        "pymilvus", "engine 'milvus'", "pymilvus and milvus-lite", "milvus", EngineError
    )


@register_engine("milvus")
class MilvusEngine(VectorStoreEngine):
    """Milvus Lite over rankscope's embeddings.

    Options: ``path`` (a folder for Milvus Lite's ``milvus.db``; default a temporary one,
    removed on close), ``collection`` (default ``rankscope``), ``index`` (``flat``, ``hnsw``
    default, ``ivf_flat``; ``ivf_pq`` is refused: Milvus Lite does not build it), ``m`` (16),
    ``ef_construction`` (200), ``ef_search`` (64), ``nlist`` (128), ``nprobe`` (8), ``pq_m``
    (default dimension / 8), ``pq_bits`` (8), and the embedding options of
    :class:`~rankscope.engines.vectorstore.VectorStoreEngine`.
    """

    name = "milvus"
    option_choices: ClassVar[Mapping[str, tuple[str, ...]]] = {"index": INDEX_KINDS}

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        path: str | Path | None = None,
        collection: str = "rankscope",
        index: str = "hnsw",
        m: int = 16,
        ef_construction: int = 200,
        ef_search: int = 64,
        nlist: int = 128,
        nprobe: int = 8,
        pq_m: int | None = None,
        pq_bits: int = 8,
        **embedding: Any,
    ) -> None:
        self.kind = check_choice("milvus", "index", index, INDEX_KINDS)
        if self.kind not in LITE_KINDS:
            raise ConfigError(
                f"milvus engine: Milvus Lite does not build an {self.kind} index",
                value=index,
                hint=f"use index: {', '.join(LITE_KINDS)}",
            )
        self.m = check_int("milvus", "m", m, 2)
        self.ef_construction = check_int("milvus", "ef_construction", ef_construction, 1)
        self.ef_search = check_int("milvus", "ef_search", ef_search, 1)
        self.nlist = check_int("milvus", "nlist", nlist, 1)
        self.nprobe = check_int("milvus", "nprobe", nprobe, 1)
        self.pq_m = None if pq_m is None else check_int("milvus", "pq_m", pq_m, 1)
        self.pq_bits = check_int("milvus", "pq_bits", pq_bits, 1, 16)
        if not isinstance(collection, str) or not _NAME.fullmatch(collection):
            raise ConfigError(
                "milvus engine option 'collection' must be a Milvus name (letters, digits and "
                "_, not starting with a digit)",
                value=collection,
            )
        self.collection = collection
        super().__init__(model, **embedding)
        self._folder = StoreFolder.of(path, "milvus")
        self._client: Any = None
        self._filled = False
        self._search_params_sent: dict[str, int] = {}
        self._nlist_built: int | None = None

    def _connect(self) -> Any:
        if self._client is None:
            pymilvus = _import_pymilvus()
            self._folder.path.mkdir(parents=True, exist_ok=True)
            try:
                self._client = pymilvus.MilvusClient(str(self._folder.path / "milvus.db"))
            except Exception as exc:  # milvus-lite missing or its server not starting
                raise wrap_store_error("milvus", "starting Milvus Lite", exc) from exc
        return self._client

    def _index_params(self, dim: int) -> tuple[str, dict[str, int], dict[str, int]]:
        """Milvus's index type, build parameters and search parameters."""
        if self.kind == "hnsw":
            return (
                "HNSW",
                {"M": self.m, "efConstruction": self.ef_construction},
                {"ef": self.ef_search},
            )
        if self.kind == "ivf_flat":
            return "IVF_FLAT", {"nlist": self.nlist}, {"nprobe": self.nprobe}
        if self.kind == "ivf_pq":
            pq_m = self.pq_m or max(1, dim // 8)
            build = {"nlist": self.nlist, "m": pq_m, "nbits": self.pq_bits}
            return "IVF_PQ", build, {"nprobe": self.nprobe}
        return "FLAT", {}, {}

    def _build(self, vectors: Matrix, docs: Sequence[Document]) -> None:
        pymilvus = _import_pymilvus()
        client = self._connect()
        self._filled = False
        try:
            if client.has_collection(self.collection):
                client.drop_collection(self.collection)
            n = int(vectors.shape[0])
            if n == 0:
                return
            dim = int(vectors.shape[1])
            kind, build, self._search_params_sent = self._index_params(dim)
            self._nlist_built = min(self.nlist, n)  # Milvus Lite: at most one cell per vector
            schema = client.create_schema(auto_id=False)
            schema.add_field("row", pymilvus.DataType.INT64, is_primary=True)
            schema.add_field("vector", pymilvus.DataType.FLOAT_VECTOR, dim=dim)
            params = client.prepare_index_params()
            # under "params": pymilvus would otherwise send each as a key of its own, which
            # Milvus Lite ignores (it reads the JSON of "params")
            params.add_index(
                field_name="vector", index_type=kind, metric_type="COSINE", params={"params": build}
            )
            client.create_collection(self.collection, schema=schema, index_params=params)
            for lo in range(0, n, _BATCH):
                rows = range(lo, min(n, lo + _BATCH))
                client.insert(
                    self.collection, [{"row": i, "vector": vectors[i].tolist()} for i in rows]
                )
            # sealed segments: without a flush, Milvus Lite searches the growing (unsealed)
            # rows by rebuilding an in-memory snapshot of them at every search
            client.flush(self.collection)
            client.load_collection(self.collection)
        except EngineError:
            raise
        except Exception as exc:  # pymilvus raises MilvusException and others
            raise wrap_store_error("milvus", "building the collection", exc) from exc
        self._filled = True

    def _search_params(self, k: int) -> dict[str, int | float | str | bool]:
        if self.kind == "flat":
            return {"index": "flat", "search": "exact"}
        if self.kind == "hnsw":
            # Milvus Lite's HNSW is faiss's: ef as set, not raised to k
            return {
                "index": "hnsw",
                "m": self.m,
                "ef_construction": self.ef_construction,
                "ef_search": self.ef_search,
            }
        nlist = self._nlist_built if self._nlist_built is not None else self.nlist
        return {"index": "ivf_flat", "nlist": nlist, "nprobe": min(self.nprobe, nlist)}

    def _knn(self, vector: Matrix, k: int) -> list[tuple[int, float]]:
        if not self._filled:
            return []
        try:
            found = self._connect().search(
                self.collection,
                data=[vector.tolist()],
                limit=k,
                search_params={"metric_type": "COSINE", "params": self._search_params_sent},
                output_fields=["row"],
            )
        except Exception as exc:
            raise wrap_store_error("milvus", "a search", exc) from exc
        return [(int(h["row"]), float(h["distance"])) for h in found[0]]

    def _store_bytes(self) -> int | None:
        return folder_bytes(self._folder.path)

    def _close_store(self) -> None:
        client, self._client = self._client, None
        self._filled = False
        if client is not None:
            with contextlib.suppress(Exception):  # the server may be gone; the folder goes anyway
                client.close()
            # Milvus Lite's server outlives its clients and writes its files once more when it
            # stops (at exit): stop it now, before its folder goes
            with contextlib.suppress(Exception):
                from milvus_lite.server_manager import server_manager_instance

                server_manager_instance.release_server(str(self._folder.path / "milvus.db"))
        self._folder.remove()
