"""The ``pgvector`` engine against a real throwaway PostgreSQL server with pgvector."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from prerequisites import shared_data
from rankscope.engines import create_engine
from rankscope.engines.base import Document, Query
from rankscope.engines.embeddings import HashingEmbedder
from rankscope.engines.pgvector import PgVectorEngine, vector_literal
from rankscope.errors import ConfigError, EngineError, UnsupportedQueryError

psycopg = pytest.importorskip("psycopg")
pytestmark = pytest.mark.postgres

DOCS = [
    Document("d1", "Pressure on a swept wing in supersonic flow.", title="Supersonic wings"),
    Document("d2", "Heat transfer in the laminar boundary layer.", title="Boundary layer"),
    Document("d3", "Flutter of a thin wing at subsonic speeds.", title="Wing flutter"),
    Document("d4", "Shock waves in supersonic nozzle flow.", title="Shock waves"),
    Document("d5", "Cooking pasta with tomato sauce.", title="Pasta"),
    Document("empty", "", title="!!"),  # no word: embeds to the zero vector
]


class TableEmbedder:
    """Fixed vectors per text, to check ordering and scores exactly."""

    model_id = "table-3d"

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.array([self.vectors[t] for t in texts], dtype=np.float32)

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self.embed_documents(texts)


def q(text: str, **kw: object) -> Query:
    return Query(id="q", text=text, **kw)  # type: ignore[arg-type]


def expected_cosine(embedder: HashingEmbedder, query: str) -> list[tuple[str, float]]:
    texts = ["\n".join(t for t in (d.title, d.text) if t) for d in DOCS]
    m = embedder.embed_documents(texts)
    v = embedder.embed_queries([query])[0]
    scored = [
        (d.id, float(row @ v) / float(np.linalg.norm(row) * np.linalg.norm(v)))
        for d, row in zip(DOCS, m, strict=True)
        if np.linalg.norm(row) > 0
    ]
    return sorted(scored, key=lambda p: (-p[1], p[0]))


@pytest.mark.parametrize("hnsw", [False, True])
def test_ranks_by_cosine_similarity(pgvector_dsn: str, hnsw: bool) -> None:
    emb = HashingEmbedder(64)
    with PgVectorEngine(pgvector_dsn, embedder=emb, hnsw=hnsw, return_text=True) as eng:
        eng.index(DOCS)
        hits = eng.search(q("supersonic wing flow"), 10)
        want = expected_cosine(emb, "supersonic wing flow")
        assert [h.doc_id for h in hits] == [d for d, _ in want]
        assert [h.score for h in hits] == pytest.approx([s for _, s in want], abs=1e-5)
        assert hits[0].text == DOCS[[d.id for d in DOCS].index(hits[0].doc_id)].text
        assert "empty" not in [h.doc_id for h in hits]  # zero vector: never returned
        assert len(eng.search(q("supersonic wing flow"), 2)) == 2


def test_exact_vectors_and_scores(pgvector_dsn: str) -> None:
    docs = [Document("a", "A"), Document("b", "B"), Document("c", "C")]
    emb = TableEmbedder(
        {"A": [1, 0, 0], "B": [1, 1, 0], "C": [0, 0, 1], "qa": [1, 0.1, 0], "qc": [0, 0, 2]}
    )
    with PgVectorEngine(pgvector_dsn, embedder=emb, table="exact_vectors") as eng:
        eng.index(docs)
        hits = eng.search(q("qa"), 3)
        assert [h.doc_id for h in hits] == ["a", "b", "c"]
        qa = np.array([1, 0.1, 0])
        assert hits[0].score == pytest.approx(1 / np.linalg.norm(qa), abs=1e-6)
        assert hits[1].score == pytest.approx(1.1 / (np.linalg.norm(qa) * np.sqrt(2)), abs=1e-6)
        assert hits[2].score == pytest.approx(0.0, abs=1e-6)
        assert [h.doc_id for h in eng.search(q("qc"), 1)] == ["c"]
    with psycopg.connect(pgvector_dsn) as conn:
        indexes = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename = 'exact_vectors'"
        ).fetchall()
        assert any("hnsw" in r[0] and "vector_cosine_ops" in r[0] for r in indexes)
        typ = conn.execute(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attrelid = 'exact_vectors'::regclass AND attname = 'embedding'"
        ).fetchone()
        assert typ == ("vector(3)",)


def test_deep_search_beyond_ef_search_limit_scans_exactly(pgvector_dsn: str) -> None:
    with PgVectorEngine(pgvector_dsn, model="hashing:32", ef_search=1) as eng:
        eng.index(DOCS)
        assert len(eng.search(q("wing"), 1001)) == len(DOCS) - 1
        assert eng.search_stats() == {"approximate_searches": 0, "exact_searches": 1}
        assert len(eng.search(q("wing"), 50)) == len(DOCS) - 1
        assert eng.search_stats() == {"approximate_searches": 1, "exact_searches": 1}


def cranfield_docs() -> list[Document]:
    path = shared_data("cranfield", "beir", "corpus.jsonl")
    with path.open() as fh:
        return [Document(str(r["_id"]), r["text"], title=r["title"]) for r in map(json.loads, fh)]


def hnsw_index_scans(dsn: str, table: str) -> int | None:
    """The server's count of scans of the table's HNSW index (None: it has none)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            "SELECT s.idx_scan FROM pg_stat_user_indexes s JOIN pg_class c ON c.oid = "
            "s.indexrelid JOIN pg_am a ON a.oid = c.relam WHERE s.relid = to_regclass(%s) "
            "AND a.amname = 'hnsw'",
            [f'"{table}"'],
        ).fetchone()
    return None if row is None else int(row[0])


CRANFIELD_QUERIES = [
    "boundary layer transition",
    "heat transfer in hypersonic flow",
    "buckling of thin cylindrical shells under pressure",
    "flutter of wings",
    "shock wave interaction with a laminar boundary layer",
]


def test_hnsw_search_goes_through_the_index_at_depth_100(pgvector_dsn: str) -> None:
    """At k = 100 (a benchmark's default max_k) over Cranfield's 1,400 abstracts, the planner
    preferred a sequential scan and a sort: exact rankings, from an index built for nothing.
    The search now goes through the index (its plan, and the server's scan count, say so), and
    ``exact=True`` scans exactly without building one."""
    docs = cranfield_docs()
    emb = HashingEmbedder(64)
    matrix = emb.embed_documents(["\n".join(t for t in (d.title, d.text) if t) for d in docs])
    norms = np.linalg.norm(matrix, axis=1)
    with (
        PgVectorEngine(pgvector_dsn, embedder=emb, drop_on_close=True) as approx,
        PgVectorEngine(pgvector_dsn, embedder=emb, exact=True, drop_on_close=True) as exact,
    ):
        approx.index(docs)
        exact.index(docs)
        assert approx.table is not None and exact.table is not None
        assert hnsw_index_scans(pgvector_dsn, exact.table) is None  # no index built
        before = hnsw_index_scans(pgvector_dsn, approx.table)
        assert before is not None
        for text in CRANFIELD_QUERIES:
            vec = emb.embed_queries([text])[0]
            cosine = (matrix @ vec)[norms > 0] / (norms[norms > 0] * np.linalg.norm(vec))
            best = sorted((float(c) for c in cosine), reverse=True)[:100]
            found = exact.search(q(text), 100)
            assert [h.score for h in found] == pytest.approx(best, abs=1e-6)
            near = approx.search(q(text), 100)
            assert len(near) == 100
            # approximate: never better than the exact ranking, position by position
            assert all(a.score <= b + 1e-6 for a, b in zip(near, best, strict=True))
        n = len(CRANFIELD_QUERIES)
        assert approx.search_stats() == {"approximate_searches": n, "exact_searches": 0}
        assert exact.search_stats() == {"approximate_searches": 0, "exact_searches": n}
        # the server counts the index scans (its statistics arrive within a second or so)
        deadline = time.monotonic() + 30
        while (hnsw_index_scans(pgvector_dsn, approx.table) or 0) < before + n:
            assert time.monotonic() < deadline, "the HNSW index was not scanned"
            time.sleep(0.2)


def test_exact_and_hnsw_together_are_refused(pgvector_dsn: str) -> None:
    with pytest.raises(ConfigError, match="'exact: true' and 'hnsw: true' contradict"):
        PgVectorEngine(pgvector_dsn, model="hashing:8", exact=True, hnsw=True)


def test_query_without_words_returns_nothing(pgvector_dsn: str) -> None:
    with PgVectorEngine(pgvector_dsn, model="hashing:32") as eng:
        eng.index(DOCS)
        assert eng.search(q("!!"), 10) == []
        assert eng.search(q("   "), 10) == []


@pytest.mark.parametrize("kind", ["match", "multi_match", "phrase", "boolean"])
def test_only_query_string_is_supported(pgvector_dsn: str, kind: str) -> None:
    with PgVectorEngine(pgvector_dsn, model="hashing:32") as eng:
        eng.index(DOCS)
        with pytest.raises(UnsupportedQueryError, match="query_string"):
            eng.search(q("wing", kind=kind, field="title", must=("wing",)), 5)


def test_same_corpus_and_model_reuse_the_table(pgvector_dsn: str) -> None:
    with PgVectorEngine(pgvector_dsn, model="hashing:32", drop_on_close=False) as first:
        first.index(DOCS)
        table = first.table
        assert first.index_stats() in (
            {"documents_embedded": len(DOCS), "table_reused": 0},
            {"documents_embedded": 0, "table_reused": 1},  # an earlier test stored it
        )
    assert table is not None and table.startswith("rankscope_vec_")
    with psycopg.connect(pgvector_dsn, autocommit=True) as conn:
        conn.execute(f"DELETE FROM \"{table}\" WHERE id = 'd5'")  # visible only if not reloaded
    with PgVectorEngine(pgvector_dsn, model="hashing:32", drop_on_close=False) as second:
        second.index(DOCS)
        assert second.table == table
        assert second.index_stats() == {"documents_embedded": 0, "table_reused": 1}
        assert "d5" not in [h.doc_id for h in second.search(q("pasta"), 10)]
    with PgVectorEngine(pgvector_dsn, model="hashing:48") as other_model:
        other_model.index(DOCS)
        assert other_model.table != table
        other_table = other_model.table
    with psycopg.connect(pgvector_dsn) as conn:  # content-named and not kept: dropped on close
        assert conn.execute("SELECT to_regclass(%s)", [other_table]).fetchone() == (None,)
    with PgVectorEngine(pgvector_dsn, model="hashing:32", reuse=False, drop_on_close=True) as e:
        e.index(DOCS)
        assert e.search(q("pasta"), 1)[0].doc_id == "d5"
    with psycopg.connect(pgvector_dsn) as conn:
        assert conn.execute("SELECT to_regclass(%s)", [table]).fetchone() == (None,)


def test_index_stats_count_embedding_cache_hits(pgvector_dsn: str, tmp_path: Path) -> None:
    from rankscope.engines.embeddings import CachedEmbedder, EmbeddingCache, HashingEmbedder

    cache = EmbeddingCache(tmp_path / "e.sqlite")
    embedder = CachedEmbedder(HashingEmbedder(24), cache)
    with PgVectorEngine(pgvector_dsn, embedder=embedder, reuse=False, drop_on_close=True) as e:
        e.index(DOCS)
        cold = e.index_stats()
        e.index(DOCS)
        warm = e.index_stats()
    assert (cold["embedding_cache_hits"], cold["embedding_cache_misses"]) == (0, len(DOCS))
    assert (warm["embedding_cache_hits"], warm["embedding_cache_misses"]) == (len(DOCS), 0)
    assert warm["table_reused"] == 0
    cache.close()


def test_empty_corpus(pgvector_dsn: str) -> None:
    with PgVectorEngine(pgvector_dsn, model="hashing:32", table="empty_vectors") as eng:
        eng.index([])
        assert eng.search(q("wing"), 5) == []


def test_bad_documents_are_refused(pgvector_dsn: str) -> None:
    with PgVectorEngine(pgvector_dsn, model="hashing:32") as eng:
        with pytest.raises(EngineError, match="duplicate document id 'x'"):
            eng.index([Document("x", "a"), Document("x", "b")])
        with pytest.raises(EngineError, match="NUL"):
            eng.index([Document("y", "a\x00b")])


def test_embedder_returning_wrong_shape_is_reported(pgvector_dsn: str) -> None:
    class Broken(TableEmbedder):
        def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
            return np.zeros((len(texts) + 1, 3), dtype=np.float32)

    with (
        PgVectorEngine(pgvector_dsn, embedder=Broken({})) as eng,
        pytest.raises(EngineError, match="returned shape"),
    ):
        eng.index(DOCS)


def test_bad_options(pgvector_dsn: str) -> None:
    with pytest.raises(ConfigError, match="ef_construction"):
        PgVectorEngine(pgvector_dsn, model="hashing:8", m=32, ef_construction=40)
    with pytest.raises(ConfigError, match="not both"):
        PgVectorEngine(pgvector_dsn, model="hashing:8", embedder=HashingEmbedder(8))
    with pytest.raises(ConfigError, match="embed_fields"):
        PgVectorEngine(pgvector_dsn, model="hashing:8", embed_fields="text")
    with pytest.raises(ConfigError, match="'m'"):
        PgVectorEngine(pgvector_dsn, model="hashing:8", m=1)


def test_unreachable_server_is_an_engine_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    eng = PgVectorEngine(
        f"host=127.0.0.1 port={port} dbname=v user=u password=s3cret", model="hashing:8"
    )
    with pytest.raises(EngineError, match=f"cannot connect.*port={port}") as info:
        eng.index(DOCS)
    assert "s3cret" not in str(info.value)


def test_vector_literal_round_trips_float32() -> None:
    row = np.array([0.1, -2.5, 1e-8], dtype=np.float32)
    text = vector_literal(row)
    assert text.startswith("[") and text.endswith("]")
    back = np.array([float(x) for x in text[1:-1].split(",")], dtype=np.float32)
    assert np.array_equal(back, row)


def test_registered_under_pgvector(pgvector_dsn: str) -> None:
    with create_engine("pgvector", dsn=pgvector_dsn, model="hashing:32") as eng:
        assert isinstance(eng, PgVectorEngine)
        eng.index(DOCS)
        assert eng.search(q("tomato pasta"), 1)[0].doc_id == "d5"
