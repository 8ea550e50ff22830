"""The embedded vector stores beyond the shared contract: index kinds that need a larger corpus,
exact neighbours, what they report about their index, filters, options, and bm25s's variants.

Every store runs on the model-free hashing embedder (the MiniLM path is the vector engine's)."""

from __future__ import annotations

import importlib.util
import os
import random
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from rankscope.engines import Document, Engine, Query, create_engine
from rankscope.engines.embeddings import HashingEmbedder, Matrix
from rankscope.errors import ConfigError, UnsupportedQueryError

MODEL = "hashing:64"


def _docs(n: int = 400, seed: int = 3) -> list[Document]:
    words = [f"w{i}" for i in range(150)]
    rng = random.Random(seed)
    return [
        Document(f"d{i:03d}", " ".join(rng.sample(words, 8)), fields={"part": str(i % 2)})
        for i in range(n)
    ]


@pytest.fixture
def engines() -> Iterator[list[Engine]]:
    made: list[Engine] = []
    yield made
    for engine in made:
        engine.close()


def _make(made: list[Engine], name: str, **options: object) -> Engine:
    engine = create_engine(name, model=MODEL, **options)
    made.append(engine)
    return engine


# (engine, options, module): settings tight enough that some of 20 queries miss a neighbour
_APPROXIMATE = [
    ("faiss", {"index": "ivf_flat", "nlist": 16, "nprobe": 2}, "faiss"),
    ("faiss", {"index": "ivf_pq", "nlist": 8, "pq_m": 8, "pq_bits": 6, "nprobe": 2}, "faiss"),
    ("faiss", {"index": "hnsw", "m": 4, "ef_search": 4}, "faiss"),
    ("hnswlib", {"m": 4, "ef_search": 2}, "hnswlib"),
    ("usearch", {"m": 4, "ef_search": 4, "dtype": "i8"}, "usearch"),
    ("lancedb", {"index": "ivf_pq", "nlist": 4, "pq_m": 8, "nprobe": 1}, "lancedb"),
    ("lancedb", {"index": "ivf_hnsw_sq", "nlist": 1, "m": 4, "ef_search": 2}, "lancedb"),
    ("chroma", {"m": 4, "ef_search": 4}, "chromadb"),
    # flushed, Milvus Lite searches its index (an unflushed collection is scanned exactly)
    ("milvus", {"index": "hnsw", "m": 4, "ef_construction": 8, "ef_search": 2}, "milvus_lite"),
]


@pytest.mark.parametrize(
    ("name", "options", "module"),
    _APPROXIMATE,
    ids=[f"{case[0]}-{i}" for i, case in enumerate(_APPROXIMATE)],
)
def test_approximate_indexes_search_and_know_their_exact_neighbours(
    engines: list[Engine], name: str, options: dict[str, object], module: str
) -> None:
    pytest.importorskip(module)
    docs = _docs()
    engine = _make(engines, name, **options)
    engine.index(docs)
    embedder = HashingEmbedder(64)
    matrix: Matrix = embedder.embed([d.text for d in docs])
    found_any_miss = False
    for i in range(20):
        query = Query(f"q{i}", f"w{i} w{i + 30} w{i + 60}")
        hits = engine.search(query, 10)
        assert 0 < len(hits) <= 10
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        exact = engine.exact_neighbours(query, 10)  # type: ignore[attr-defined]
        scores = matrix @ embedder.embed([query.text])[0]
        kth = float(np.sort(scores)[::-1][9])
        # the exact top 10 and the units tied with the 10th, with numpy's cosines
        expected = {docs[j].id for j in np.flatnonzero(scores >= kth - 1e-6)}
        assert {h.doc_id for h in exact} == expected
        by_id = {d.id: j for j, d in enumerate(docs)}
        for h in exact:
            assert h.score == pytest.approx(float(scores[by_id[h.doc_id]]), abs=1e-6)
        found_any_miss |= not {h.doc_id for h in hits} <= expected
    stats = engine.index_stats()
    assert stats["vectors"] == 400 and stats["build_seconds"] >= 0 and stats["index_bytes"] > 0
    assert "exact_search" not in stats
    # the settings are tight enough that some query misses an exact neighbour
    assert found_any_miss


def test_stores_that_search_exactly_say_so(engines: list[Engine]) -> None:
    pytest.importorskip("qdrant_client")
    docs = _docs(200)
    engine = _make(engines, "qdrant", m=4, ef_search=1)
    engine.index(docs)
    assert engine.index_stats()["exact_search"] == 1
    assert engine.effective_params(5) == {"search": "exact"}
    for i in range(10):
        query = Query(f"q{i}", f"w{i} w{i + 40}")
        exact = {h.doc_id for h in engine.exact_neighbours(query, 5)}  # type: ignore[attr-defined]
        assert {h.doc_id for h in engine.search(query, 5)} <= exact


def test_ivf_and_pq_refuse_a_corpus_too_small_to_train(engines: list[Engine]) -> None:
    pytest.importorskip("faiss")
    docs = _docs(40)
    with pytest.raises(ConfigError, match="nlist=64 needs at least 64 vectors"):
        _make(engines, "faiss", index="ivf_flat", nlist=64).index(docs)
    with pytest.raises(ConfigError, match="needs at least that many vectors; the corpus has 40"):
        _make(engines, "faiss", index="ivf_pq", nlist=4, pq_m=8).index(docs)
    with pytest.raises(ConfigError, match="must divide the vector dimension 64"):
        _make(engines, "faiss", index="ivf_pq", nlist=4, pq_m=7, pq_bits=4).index(docs)


def test_unknown_options_name_the_accepted_ones() -> None:
    pytest.importorskip("hnswlib")
    with pytest.raises(ConfigError) as info:
        create_engine("hnswlib", model=MODEL, ef=10)
    assert "unknown 'ef'" in str(info.value) and "ef_search" in str(info.value)
    assert "cache_queries" in str(info.value)
    with pytest.raises(ConfigError, match="index"):
        create_engine("faiss", model=MODEL, index="lsh")


def test_phrase_and_field_queries_are_refused() -> None:
    pytest.importorskip("usearch")
    engine = create_engine("usearch", model=MODEL)
    with engine:
        engine.index(_docs(20))
        with pytest.raises(UnsupportedQueryError, match="usearch"):
            engine.search(Query("q", "w1", kind="match", field="text"), 5)


def test_chroma_where_filters_every_query(engines: list[Engine]) -> None:
    pytest.importorskip("chromadb")
    docs = _docs(100)
    engine = _make(engines, "chroma", where={"part": "1"})
    engine.index(docs)
    odd = {d.id for d in docs if d.fields["part"] == "1"}
    hits = engine.search(Query("q", "w1 w2 w3"), 20)
    assert hits and {h.doc_id for h in hits} <= odd


class _Counting(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(64)
        self.queries = 0

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        self.queries += len(texts)
        return super().embed_queries(texts)


def test_cache_queries_embeds_each_query_once() -> None:
    pytest.importorskip("faiss")
    embedder = _Counting()
    cached = create_engine("faiss", embedder=embedder, index="flat", cache_queries=True)
    with cached:
        cached.index(_docs(50))
        for _ in range(3):
            cached.search(Query("q", "w1 w2"), 5)
        assert embedder.queries == 1
    embedder = _Counting()
    plain = create_engine("faiss", embedder=embedder, index="flat")
    with plain:
        plain.index(_docs(50))
        for _ in range(3):
            plain.search(Query("q", "w1 w2"), 5)
        assert embedder.queries == 3


def test_lancedb_full_text_mode_loads_no_model(engines: list[Engine]) -> None:
    pytest.importorskip("lancedb")
    from rankscope.engines.base import engine_class

    cls = engine_class("lancedb")
    assert not cls.uses_embeddings({"mode": "fts"}) and cls.uses_embeddings({"mode": "hybrid"})
    assert cls.with_embedding_model({"mode": "fts"}, "all-MiniLM-L6-v2") == {"mode": "fts"}
    engine = create_engine("lancedb", mode="fts")
    engines.append(engine)
    engine.index(_docs(50))
    assert engine.search(Query("q", "w7"), 5)
    assert engine.exact_neighbours(Query("q", "w7"), 5) is None  # type: ignore[attr-defined]
    assert "embedding_cache_hits" not in engine.index_stats()


@pytest.mark.parametrize("method", ["robertson", "lucene", "atire", "bm25l", "bm25+"])
def test_bm25s_variants_rank_the_matching_document_first(method: str) -> None:
    pytest.importorskip("bm25s")
    docs = [
        Document("a", "the boundary layer becomes turbulent"),
        Document("b", "bread and butter"),
        Document("c", "a warm soup"),
        Document("d", "shock waves over wings"),
    ]
    with create_engine("bm25s", method=method, k1=1.2, b=0.75) as engine:
        engine.index(docs)
        hits = engine.search(Query("q", "turbulence in boundary layers"), 10)
        assert [h.doc_id for h in hits] == ["a"]
        assert engine.search(Query("q", "the and a"), 10) == []  # stop words only


def test_bm25s_refuses_an_unknown_stemmer_language() -> None:
    pytest.importorskip("Stemmer")
    with pytest.raises(ConfigError, match="PyStemmer does not know"):
        create_engine("bm25s", stemmer="klingon")


def test_temporary_store_folders_are_gone_after_close_and_exit(tmp_path: Path) -> None:
    """Each store with a temporary folder removes it on close, and nothing writes it again when
    the process exits (Milvus Lite's server flushes at exit unless stopped on close)."""
    stores = [(n, m) for n, m in _FOLDER_STORES if importlib.util.find_spec(m) is not None]
    if not stores:
        pytest.skip("no store with a folder is installed")
    script = textwrap.dedent(
        f"""
        from rankscope.engines import Document, Query, create_engine
        for name in {[n for n, _ in stores]!r}:
            engine = create_engine(name, model="hashing:16")
            engine.index([Document("a", "x y"), Document("b", "y z")])
            engine.search(Query("q", "x"), 2)
            print(engine._folder.path)
            engine.close()
        """
    )
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    folders = done.stdout.split()
    assert len(folders) == len(stores)
    assert all(folder.startswith(str(tmp_path)) for folder in folders)
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith("rankscope-")]


_FOLDER_STORES = [
    ("chroma", "chromadb"),
    ("qdrant", "qdrant_client"),
    ("lancedb", "lancedb"),
    ("milvus", "milvus_lite"),
]
SRC = Path(__file__).resolve().parents[2] / "src"


# (engine, options with ef_search below k): hnswlib and USearch widen the search to
# max(ef_search, k); faiss's HNSW does not. (Chroma's HNSW is hnswlib's code, but two Chroma
# builds of the same vectors differ, so its rankings cannot show it.)
_EF_BELOW_K = [
    ("hnswlib", {"m": 4}, "hnswlib", True),
    ("usearch", {"m": 4}, "usearch", True),
    ("faiss", {"index": "hnsw", "m": 4}, "faiss", False),
]


@pytest.mark.parametrize(
    ("name", "options", "module", "widened"), _EF_BELOW_K, ids=[c[0] for c in _EF_BELOW_K]
)
def test_effective_params_say_what_an_ef_below_k_searched_with(
    engines: list[Engine], name: str, options: dict[str, object], module: str, widened: bool
) -> None:
    pytest.importorskip(module)
    docs = _docs()
    low = _make(engines, name, ef_search=2, **options)
    at_k = _make(engines, name, ef_search=10, **options)
    low.index(docs)
    at_k.index(docs)
    assert low.effective_params(10)["ef_search"] == (10 if widened else 2)
    assert at_k.effective_params(10)["ef_search"] == 10
    assert (low.effective_params(10) == at_k.effective_params(10)) is widened
    queries = [Query(f"q{i}", f"w{i} w{i + 30} w{i + 60}") for i in range(20)]
    rankings = [[[h.doc_id for h in e.search(q, 10)] for q in queries] for e in (low, at_k)]
    if widened:  # the same parameters: the very same searches
        assert rankings[0] == rankings[1]


def test_faiss_ivf_reports_its_cells_and_probes(engines: list[Engine]) -> None:
    pytest.importorskip("faiss")
    engine = _make(engines, "faiss", index="ivf_flat", nlist=16, nprobe=40)
    engine.index(_docs())
    assert engine.effective_params(10) == {"index": "ivf_flat", "nlist": 16, "nprobe": 16}


def test_faiss_training_warnings_go_to_the_notes_once(
    engines: list[Engine], capfd: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("faiss")
    engine = _make(engines, "faiss", index="ivf_pq", nlist=8, pq_m=8, pq_bits=8)
    engine.index(_docs(300))
    # faiss would print one line per sub-quantizer (8 here) straight to stderr
    assert "WARNING clustering" not in capfd.readouterr().err
    assert engine.notes() == [
        "faiss IVF k-means: 8 centroids trained on 300 vectors; faiss asks for at least 312 "
        "training points",
        "faiss PQ codebooks: 256 centroids trained on 300 vectors; faiss asks for at least "
        "9,984 training points",
    ]
    engine.index(_docs(300, seed=4))  # indexed again: the notes are the new index's
    assert len(engine.notes()) == 2


def test_milvus_lite_refuses_the_ivf_pq_it_does_not_build() -> None:
    with pytest.raises(ConfigError, match="Milvus Lite does not build an ivf_pq index"):
        create_engine("milvus", model=MODEL, index="ivf_pq")
