"""Engines index a streamed corpus as it is read: each read of a stream is counted here."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rankscope.engines import Document, Query, create_engine
from rankscope.engines._text import document_fields
from rankscope.engines.chunking import chunk_parent, iter_chunks
from rankscope.engines.hybrid import HybridEngine
from rankscope.engines.rerank import RerankEngine
from rankscope.engines.stream import DocumentStream, extra_fields, reiterable
from rankscope.errors import ConfigError

DOCS = [
    Document("a", "the quick brown fox", "Fox", {"lang": "en"}),
    Document("b", "a lazy dog sleeps", "Dog", {"lang": "en", "tag": "pets"}),
    Document("c", "le renard brun", "Renard", {"lang": "fr"}),
]


class Source:
    """Yields DOCS afresh on each call, counting the reads."""

    def __init__(self) -> None:
        self.reads = 0

    def __call__(self) -> Iterator[Document]:
        self.reads += 1
        yield from DOCS


def _stream(source: Source, fields: tuple[str, ...] | None = ("lang", "tag")) -> DocumentStream:
    return DocumentStream(source, fields=fields, count=len(DOCS))


@pytest.mark.parametrize("name", ["sqlite", "tantivy"])
def test_lexical_engines_read_a_stream_with_known_fields_once(name: str) -> None:
    pytest.importorskip("sqlite3" if name == "sqlite" else name)
    source = Source()
    with create_engine(name) as engine:
        engine.index(_stream(source))
        assert source.reads == 1
        hits = engine.search(Query("q", "pets", kind="match", field="tag"), 5)
        assert [h.doc_id for h in hits] == ["b"]
        assert [h.doc_id for h in engine.search(Query("q", "renard"), 5)] == ["c"]


@pytest.mark.parametrize("name", ["sqlite", "tantivy"])
def test_lexical_engines_still_take_a_generator(name: str) -> None:
    pytest.importorskip("sqlite3" if name == "sqlite" else name)
    with create_engine(name) as engine:
        engine.index(d for d in DOCS)  # read once: listed to learn the fields first
        hits = engine.search(Query("q", "pets", kind="match", field="tag"), 5)
        assert [h.doc_id for h in hits] == ["b"]


def test_stream_without_known_fields_is_scanned_for_them() -> None:
    source = Source()
    stream = _stream(source, fields=None)
    assert document_fields(stream) == ["title", "text", "lang", "tag"]
    assert source.reads == 1
    assert extra_fields(_stream(source)) == ["lang", "tag"] and source.reads == 1


def test_hybrid_members_each_read_the_stream() -> None:
    source = Source()
    hybrid = HybridEngine([{"engine": "sqlite"}, {"engine": "sqlite", "tokenizer": "unicode61"}])
    with hybrid:
        hybrid.index(_stream(source))
        assert source.reads == 2  # once per member, nothing held between them
        assert hybrid.search(Query("q", "fox"), 3)[0].doc_id == "a"


def test_rerank_keeps_texts_in_the_first_stages_read() -> None:
    source = Source()
    rerank = RerankEngine({"engine": "sqlite"}, mode="embedding", model="hashing", depth=5)
    with rerank:
        rerank.index(_stream(source))
        assert source.reads == 1
        assert set(rerank._texts) == {"a", "b", "c"}
        # the first stage got the field names with the stream: it can search a field
        hits = rerank.search(Query("q", "pets", kind="match", field="tag"), 3)
        assert [h.doc_id for h in hits] == ["b"]


def test_reiterable_lists_only_what_can_be_read_once() -> None:
    stream = _stream(Source())
    assert reiterable(stream) is stream
    assert reiterable(DOCS) is DOCS
    listed = reiterable(d for d in DOCS)
    assert list(listed) == list(listed) == DOCS
    of = DocumentStream.of(d for d in DOCS)
    assert of.count == 3 and of.fields == ("lang", "tag") and list(of) == list(of) == DOCS


def test_chunks_are_made_as_they_are_read() -> None:
    made = iter_chunks(iter(DOCS), size=2, overlap=0)
    first = next(made)
    assert first.id == "a#0" and first.text == "the quick" and first.parent_id == "a"
    assert chunk_parent("a#0") == "a" and chunk_parent("x#y#3") == "x#y"
    assert chunk_parent("plain") == "plain"
    with pytest.raises(ConfigError):  # checked when asked for, not at the first chunk
        iter_chunks(DOCS, size=2, overlap=2)


@pytest.mark.postgres
def test_postgres_reads_a_stream_twice_and_holds_none(postgres_dsn: str) -> None:
    pytest.importorskip("psycopg")
    source = Source()
    with create_engine("postgres", dsn=postgres_dsn, table="streamed") as engine:
        engine.index(_stream(source))
        assert source.reads == 2  # checked and hashed, then copied
        hits = engine.search(Query("q", "pets", kind="match", field="tag"), 5)
        assert [h.doc_id for h in hits] == ["b"]


@pytest.mark.postgres
def test_pgvector_embeds_a_stream_in_batches(pgvector_dsn: str) -> None:
    pytest.importorskip("psycopg")
    source = Source()
    options = {"dsn": pgvector_dsn, "model": "hashing", "batch_size": 2}
    with create_engine("pgvector", table="streamed_vec", **options) as engine:
        engine.index(_stream(source))
        assert source.reads == 2  # checked and hashed, then embedded and copied
        streamed = engine.search(Query("q", "lazy dog"), 3)
    with create_engine("pgvector", table="listed_vec", **options) as engine:
        engine.index(DOCS)
        assert engine.search(Query("q", "lazy dog"), 3) == streamed
        assert streamed[0].doc_id == "b" and len(streamed) == 3
