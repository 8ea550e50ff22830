"""SQLite FTS5 engine: query translation, weights, phrase slop, boolean semantics, files."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from rankscope.engines import Document, Query, create_engine
from rankscope.engines.sqlite import SqliteEngine, fts_string
from rankscope.errors import ConfigError, EngineError

DOCS = [
    Document("a", "the quick brown fox jumps over the lazy dog", "Foxes"),
    Document("b", "a quick reaction from the brown bear", "Bears", fields={"tags": "animal fox"}),
    Document("c", "dogs are lazy in the afternoon sun", "Dogs"),
    Document("d", "fox and dog are friends", "Friends"),
]


@pytest.fixture
def engine() -> SqliteEngine:
    e = SqliteEngine()
    e.index(DOCS)
    return e


def ids(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [h.doc_id for h in hits]


def test_quoting_makes_every_word_a_string() -> None:
    assert fts_string('say "hi"') == '"say ""hi"""'


def test_translation_of_each_kind(engine: SqliteEngine) -> None:
    expr, filt, boosts = engine.translate(Query("1", 'fox AND "dog" NOT title:x'))
    assert expr == '("fox" OR "AND" OR "dog" OR "NOT" OR "title" OR "x")'
    assert filt is None and boosts is None
    expr, _, _ = engine.translate(Query("2", "lazy dog", kind="match", field="title"))
    assert expr == '{c0} : ("lazy" OR "dog")'
    expr, _, boosts = engine.translate(
        Query("3", "fox", kind="multi_match", fields=(("title", 2.0), ("tags", 0.5)))
    )
    assert expr == '{c0 c2} : ("fox")' and boosts == {"c0": 2.0, "c2": 0.5}
    assert engine.translate(Query("4", "brown fox", kind="phrase"))[0] == '"brown fox"'
    near = engine.translate(Query("5", "quick fox", kind="phrase", slop=2, field="text"))[0]
    assert near == '{c1} : NEAR("quick" "fox", 2)'
    rank, filt, _ = engine.translate(
        Query("6", "", kind="boolean", must=("fox",), should=("lazy dog",), must_not=("bear",))
    )
    assert rank == '"fox" OR "lazy dog"'
    assert filt == '("fox") NOT ("bear")'


def test_scores_are_positive_and_higher_is_better(engine: SqliteEngine) -> None:
    hits = engine.search(Query("q", "lazy dog"), 10)
    assert ids(hits)[0] in {"a", "c"}
    assert all(h.score > 0 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_match_restricts_to_the_field(engine: SqliteEngine) -> None:
    assert ids(engine.search(Query("q", "fox", kind="match", field="title"), 10)) == ["a"]
    assert ids(engine.search(Query("q", "fox", kind="match", field="tags"), 10)) == ["b"]


def test_multi_match_boosts_change_the_order(engine: SqliteEngine) -> None:
    q_title = Query("q", "fox", kind="multi_match", fields=(("title", 10.0), ("tags", 0.1)))
    q_tags = Query("q", "fox", kind="multi_match", fields=(("title", 0.1), ("tags", 10.0)))
    assert ids(engine.search(q_title, 10)) == ["a", "b"]
    assert ids(engine.search(q_tags, 10)) == ["b", "a"]


def test_phrase_and_slop(engine: SqliteEngine) -> None:
    assert ids(engine.search(Query("q", "brown fox", kind="phrase"), 10)) == ["a"]
    assert engine.search(Query("q", "quick fox", kind="phrase"), 10) == []
    # "quick brown fox": one word between quick and fox
    assert ids(engine.search(Query("q", "quick fox", kind="phrase", slop=1), 10)) == ["a"]
    # porter stemming: "dogs" and "dog" share a stem
    assert "c" in ids(engine.search(Query("q", "lazy dogs", kind="phrase", slop=3), 10))


def test_boolean_should_only_raises_scores(engine: SqliteEngine) -> None:
    plain = engine.search(Query("q", "", kind="boolean", must=("fox",)), 10)
    with_should = engine.search(Query("q", "", kind="boolean", must=("fox",), should=("lazy",)), 10)
    assert set(ids(plain)) == set(ids(with_should)) == {"a", "b", "d"}
    s_plain = {h.doc_id: h.score for h in plain}
    s_should = {h.doc_id: h.score for h in with_should}
    assert s_should["a"] > s_plain["a"]  # "a" has "lazy"
    assert ids(with_should)[0] == "a"


def test_boolean_should_alone_needs_one_match_and_must_not_excludes(engine: SqliteEngine) -> None:
    q = Query("q", "", kind="boolean", should=("bear", "sun"))
    assert set(ids(engine.search(q, 10))) == {"b", "c"}
    q = Query("q", "", kind="boolean", must=("dog",), must_not=("friends", "quick"))
    assert ids(engine.search(q, 10)) == ["c"]


def test_boolean_without_positive_terms_is_refused(engine: SqliteEngine) -> None:
    with pytest.raises(EngineError, match="no 'must' or 'should' term"):
        engine.search(Query("q", "", kind="boolean", should=("***",), must_not=("fox",)), 10)


def test_unknown_field_is_named(engine: SqliteEngine) -> None:
    with pytest.raises(EngineError, match=r"field 'author'.*indexed fields: title, text, tags"):
        engine.search(Query("q", "x", kind="match", field="author"), 10)


def test_index_file_is_written_and_replaced(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "index.sqlite"
    with create_engine("sqlite", path=str(path)) as e:
        e.index(DOCS)
        e.index(DOCS[:2])
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT count(*) FROM rankscope_fts").fetchone() == (2,)


def test_tokenizer_option(tmp_path: Path) -> None:
    with create_engine("sqlite", tokenizer="trigram") as e:
        e.index(DOCS)
        assert ids(e.search(Query("q", "afternoo"), 5)) == ["c"]
    with pytest.raises(EngineError, match="tokenizer='nosuch'"):
        create_engine("sqlite", tokenizer="nosuch").index(DOCS)
    with pytest.raises(ConfigError, match="tokenizer"):
        create_engine("sqlite", tokenizer=" ")


def test_closed_engine_refuses_work() -> None:
    e = SqliteEngine()
    e.index(DOCS)
    e.close()
    with pytest.raises(EngineError, match="closed"):
        e.search(Query("q", "fox"), 3)


def test_other_tables_in_the_database_are_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "app.sqlite"
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("CREATE TABLE docs (id TEXT)")
        conn.execute("INSERT INTO docs VALUES ('keep')")
    with create_engine("sqlite", path=str(path)) as e:
        e.index(DOCS)
        assert ids(e.search(Query("q", "bread"), 3)) == []
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT id FROM docs").fetchall() == [("keep",)]
