"""tantivy engine: analysis, query objects per kind, boosts, phrase slop, on-disk index."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tantivy")

from rankscope.engines import Document, Query, create_engine
from rankscope.engines.tantivy import TantivyEngine
from rankscope.errors import ConfigError, EngineError

DOCS = [
    Document("a", "the quick brown fox jumps over the lazy dog", "Foxes"),
    Document("b", "a quick reaction from the brown bear", "Bears", fields={"tags": "animal fox"}),
    Document("c", "dogs are lazy in the afternoon sun", "Dogs"),
    Document("d", "fox and dog are friends", "Friends"),
]


@pytest.fixture
def engine() -> TantivyEngine:
    e = TantivyEngine()
    e.index(DOCS)
    return e


def ids(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [h.doc_id for h in hits]


def test_analysis_lowercases_and_stems(engine: TantivyEngine) -> None:
    assert engine.analyze("Jumping DOGS, don't!") == ["jump", "dog", "don", "t"]
    assert TantivyEngine(stemmer=None).analyze("Jumping DOGS") == ["jumping", "dogs"]


def test_query_string_and_match(engine: TantivyEngine) -> None:
    hits = engine.search(Query("q", "lazy dog"), 10)
    assert set(ids(hits)[:2]) == {"a", "c"} and all(h.score > 0 for h in hits)
    assert ids(engine.search(Query("q", "fox", kind="match", field="title"), 10)) == ["a"]
    assert ids(engine.search(Query("q", "fox", kind="match", field="tags"), 10)) == ["b"]


def test_multi_match_boosts_change_the_order(engine: TantivyEngine) -> None:
    q_title = Query("q", "fox", kind="multi_match", fields=(("title", 10.0), ("tags", 0.1)))
    q_tags = Query("q", "fox", kind="multi_match", fields=(("title", 0.1), ("tags", 10.0)))
    assert ids(engine.search(q_title, 10)) == ["a", "b"]
    assert ids(engine.search(q_tags, 10)) == ["b", "a"]
    # a boost scales the score exactly
    single = engine.search(Query("q", "fox", kind="match", field="title"), 1)[0].score
    boosted = engine.search(Query("q", "fox", kind="multi_match", fields=(("title", 3.0),)), 1)[
        0
    ].score
    assert boosted == pytest.approx(3 * single, rel=1e-5)


def test_phrase_and_slop(engine: TantivyEngine) -> None:
    assert ids(engine.search(Query("q", "brown fox", kind="phrase"), 10)) == ["a"]
    assert engine.search(Query("q", "quick fox", kind="phrase"), 10) == []
    assert ids(engine.search(Query("q", "quick fox", kind="phrase", slop=1), 10)) == ["a"]
    # stemming: "lazy dogs" matches "lazy dog"
    assert ids(engine.search(Query("q", "lazy dogs", kind="phrase", field="text"), 10)) == ["a"]
    assert ids(engine.search(Query("q", "bears", kind="phrase", field="title"), 10)) == ["b"]


def test_boolean_semantics(engine: TantivyEngine) -> None:
    plain = engine.search(Query("q", "", kind="boolean", must=("fox",)), 10)
    with_should = engine.search(Query("q", "", kind="boolean", must=("fox",), should=("lazy",)), 10)
    assert set(ids(plain)) == set(ids(with_should)) == {"a", "b", "d"}
    assert ids(with_should)[0] == "a"
    q = Query("q", "", kind="boolean", should=("bear", "sun"))
    assert set(ids(engine.search(q, 10))) == {"b", "c"}
    q = Query("q", "", kind="boolean", must=("dog",), must_not=("friends", "quick"))
    assert ids(engine.search(q, 10)) == ["c"]
    q = Query("q", "", kind="boolean", must=("brown fox",))  # several words: a phrase
    assert ids(engine.search(q, 10)) == ["a"]
    with pytest.raises(EngineError, match="no 'must' or 'should' term"):
        engine.search(Query("q", "", kind="boolean", must_not=("fox",)), 10)


def test_stopword_only_text_gives_no_hits(engine: TantivyEngine) -> None:
    assert engine.search(Query("q", "!!! ??? ***"), 10) == []


def test_unknown_field_is_named(engine: TantivyEngine) -> None:
    with pytest.raises(EngineError, match=r"field 'author'.*indexed fields: title, text, tags"):
        engine.search(Query("q", "x", kind="match", field="author"), 10)


def test_directory_index_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "idx"
    with create_engine("tantivy", path=str(path)) as e:
        e.index(DOCS)
        assert (path / "meta.json").exists()
        e.index(DOCS[:1])
        assert ids(e.search(Query("q", "fox dog bear"), 10)) == ["a"]
    other = tmp_path / "notes"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    with pytest.raises(EngineError, match="holds no tantivy index"):
        create_engine("tantivy", path=str(other)).index(DOCS)
    assert (other / "keep.txt").read_text() == "mine"


def test_bad_stemmer_is_refused() -> None:
    with pytest.raises(ConfigError, match="stemmer"):
        create_engine("tantivy", stemmer="klingon")
