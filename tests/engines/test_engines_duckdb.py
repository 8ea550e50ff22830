"""DuckDB full-text search: the fts extension from its PyPI package; each kind's translation."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from engines_contract_data import CONTRACT_DOCS

from prerequisites import shared_data
from rankscope.engines import Document, Query, create_engine
from rankscope.engines.phrase import phrase_matches
from rankscope.errors import ConfigError, EngineError

pytest.importorskip("duckdb_extension_fts")

from rankscope.engines import duckdb_fts


def _once(docs: tuple[Document, ...]) -> Iterator[Document]:
    """The documents as an iterator that can be read once (as a streamed corpus is)."""
    yield from docs


def test_fts_loads_from_the_packaged_extension_without_network(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    # an empty HOME: no extension installed in DuckDB's own folder, so LOAD fts alone fails
    monkeypatch.setenv("HOME", str(tmp_path))
    with create_engine("duckdb") as e:
        e.index(_once(CONTRACT_DOCS))
        assert e.search(Query("q", "boundary layer"), 1)[0].doc_id == "d1"


def test_missing_extension_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(duckdb_fts, "packaged_fts_extension", lambda version: None)
    with pytest.raises(EngineError, match=r"rankscope\[duckdb\]"), create_engine("duckdb") as e:
        e.index(CONTRACT_DOCS)


def test_sloppy_phrase_reorders_terms_as_lucene_does() -> None:
    docs = [
        Document("fwd", "a blunt body in flow"),
        Document("rev", "the body blunt in flow"),
        Document("gap", "a blunt round body"),
    ]
    with create_engine("duckdb") as e:
        e.index(iter(docs))

        def ids(slop: int) -> set[str]:
            q = Query("p", "blunt body", kind="phrase", field="text", slop=slop)
            return {h.doc_id for h in e.search(q, 10)}

        assert ids(0) == {"fwd"}
        assert ids(1) == {"fwd", "gap"}  # one word between
        assert ids(2) == {"fwd", "gap", "rev"}  # a transposition costs 2
    # the same rule as the helper every engine that checks phrases itself uses
    assert not phrase_matches(["body", "blunt"], ["blunt", "body"], 1)
    assert phrase_matches(["body", "blunt"], ["blunt", "body"], 2)
    assert not phrase_matches(["c", "b", "a"], ["a", "b", "c"], 3)
    assert phrase_matches(["c", "b", "a"], ["a", "b", "c"], 4)


def test_multi_match_boosts_move_the_ranking() -> None:
    docs = [
        Document("t", "nothing here", title="tomato"),
        Document("x", "tomato tomato tomato", title="other"),
    ]
    with create_engine("duckdb") as e:
        e.index(docs)
        title_first = Query(
            "m", "tomato", kind="multi_match", fields=(("title", 10.0), ("text", 1.0))
        )
        text_first = Query(
            "m", "tomato", kind="multi_match", fields=(("title", 0.1), ("text", 1.0))
        )
        assert next(h.doc_id for h in e.search(title_first, 2)) == "t"
        assert next(h.doc_id for h in e.search(text_first, 2)) == "x"


def test_extra_fields_are_searchable_and_unknown_fields_refused() -> None:
    with create_engine("duckdb") as e:
        e.index(_once(CONTRACT_DOCS))
        hits = e.search(Query("t", "winter", kind="match", field="tags"), 5)
        assert [h.doc_id for h in hits] == ["d8"]
        with pytest.raises(EngineError, match="nope"):
            e.search(Query("t", "winter", kind="match", field="nope"), 5)


def test_boolean_must_not_and_phrase_terms() -> None:
    with create_engine("duckdb") as e:
        e.index(CONTRACT_DOCS)
        q = Query("b", "", kind="boolean", should=("shock wave", "tomato"), must_not=("blunt",))
        assert {h.doc_id for h in e.search(q, 10)} == {"d4", "d5", "d8"}


def test_bm25_parameters_change_the_scores() -> None:
    docs = [Document("a", "flow flow flow wall"), Document("b", "flow and some other words here")]
    scores = {}
    for k1 in (0.5, 2.0):
        with create_engine("duckdb", k1=k1, b=0.75) as e:
            e.index(docs)
            scores[k1] = [h.score for h in e.search(Query("q", "flow"), 2)]
    assert scores[0.5] != scores[2.0]


def test_stemming_is_an_option() -> None:
    docs = [Document("a", "the bodies of water")]
    with create_engine("duckdb") as e:
        e.index(docs)
        assert e.search(Query("q", "body"), 5)
    with create_engine("duckdb", stemmer="none") as e:
        e.index(docs)
        assert e.search(Query("q", "body"), 5) == []


def test_bad_options_are_refused() -> None:
    with pytest.raises(ConfigError, match="stemmer"):
        create_engine("duckdb", stemmer="klingon")
    with pytest.raises(ConfigError, match="k1"):
        create_engine("duckdb", b=2.0)
    with pytest.raises(ConfigError, match="'threads' must be a whole number of at least 1"):
        create_engine("duckdb", threads=0)


def test_one_thread_gives_the_same_scores_on_every_run() -> None:
    """DuckDB sums a document's BM25 terms on several threads in varying order, so scores may
    differ in their last bits between identical runs (Cranfield: about 1 in 20 of the top-100
    scores, by up to 4e-15); with ``threads: 1`` every bit is the same."""
    base = shared_data("cranfield", "beir")
    with (base / "corpus.jsonl").open() as fh:
        docs = [Document(str(r["_id"]), r["text"], title=r["title"]) for r in map(json.loads, fh)]
    with (base / "queries.jsonl").open() as fh:
        queries = [Query(str(r["_id"]), r["text"]) for r in map(json.loads, fh)][:40]
    runs = []
    for _ in range(2):
        with create_engine("duckdb", threads=1) as e:
            e.index(docs)
            runs.append([[(h.doc_id, h.score) for h in e.search(q, 100)] for q in queries])
    assert sum(len(r) for r in runs[0]) == 4000
    assert runs[0] == runs[1]
