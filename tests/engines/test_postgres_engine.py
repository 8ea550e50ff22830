"""The ``postgres`` engine against a real throwaway PostgreSQL server (see tests/conftest.py)."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from rankscope.engines import create_engine
from rankscope.engines._pg import redact_dsn
from rankscope.engines.base import Document, Hit, Query
from rankscope.engines.postgres import (
    PostgresEngine,
    sloppy_phrase_tsquery,
    tsquery_lexeme,
    websearch_units,
)
from rankscope.errors import ConfigError, EngineError

psycopg = pytest.importorskip("psycopg")
pytestmark = pytest.mark.postgres

DOCS = [
    Document(
        "d1",
        "Pressure distribution on a swept wing in supersonic flow.",
        title="Supersonic flow over wings",
    ),
    Document(
        "d2",
        "Heat transfer in the laminar boundary layer of a flat plate.",
        title="Boundary layer",
    ),
    Document(
        "d3",
        "Flutter of a thin wing at subsonic speeds; the flow is unsteady.",
        title="Wing flutter",
    ),
    Document(
        "d4",
        "Shock waves in supersonic nozzle flow and the boundary layer interaction.",
        title="Shock waves",
    ),
    Document(
        "d5",
        "Unrelated text about cooking pasta with tomato sauce.",
        fields={"path": "kitchen/pasta.md", "tags": "food cooking"},
    ),
    Document("d6", "Notes on flutter margins.", title="Nozzle design"),
    Document("d7", "It's O'Neil's back\\slash & pipe | bang! text", title="Odd characters"),
]


def ids(hits: list[Hit]) -> list[str]:
    return [h.doc_id for h in hits]


@pytest.fixture(scope="module")
def engine(postgres_dsn: str) -> Iterator[PostgresEngine]:
    with PostgresEngine(postgres_dsn, return_text=True) as eng:
        eng.index(DOCS)
        yield eng


def q(text: str = "", **kw: object) -> Query:
    return Query(id="q", text=text, **kw)  # type: ignore[arg-type]


# -- query_string -------------------------------------------------------------------------------


def test_query_string_ors_words_and_ranks_title_matches_first(engine: PostgresEngine) -> None:
    hits = engine.search(q("supersonic flow"), 10)
    assert set(ids(hits)) == {"d1", "d3", "d4"}
    assert hits[0].doc_id == "d1"  # both words, in the A-weighted title too
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert hits[0].text == DOCS[0].text


def test_query_string_and_operator_is_websearch_semantics(postgres_dsn: str) -> None:
    with PostgresEngine(postgres_dsn, operator="and") as eng:
        eng.index(DOCS)
        assert set(ids(eng.search(q("supersonic flow"), 10))) == {"d1", "d4"}
        assert set(ids(eng.search(q("supersonic or flutter"), 10))) == {"d1", "d3", "d4", "d6"}
        assert set(ids(eng.search(q("flow -supersonic"), 10))) == {"d3"}


def test_query_string_negation_and_quoted_phrase(engine: PostgresEngine) -> None:
    assert set(ids(engine.search(q("flow -supersonic"), 10))) == {"d3"}
    hits = engine.search(q('"boundary layer" heat'), 10)
    assert set(ids(hits)) == {"d2", "d4"}
    assert hits[0].doc_id == "d2"
    # a phrase in the wrong order matches nothing by itself
    assert engine.search(q('"layer boundary"'), 10) == []


def test_query_string_on_one_field(engine: PostgresEngine) -> None:
    assert set(ids(engine.search(q("flutter", field="title"), 10))) == {"d3"}
    assert set(ids(engine.search(q("flutter"), 10))) == {"d3", "d6"}


def test_stopwords_only_and_empty_queries_return_nothing(engine: PostgresEngine) -> None:
    assert engine.search(q("the of and"), 10) == []
    assert engine.search(q(""), 10) == []
    assert engine.search(q("   -"), 10) == []
    assert engine.search(q("flow"), 0) == []


def test_k_limits_hits(engine: PostgresEngine) -> None:
    assert len(engine.search(q("flow wing boundary flutter"), 2)) == 2


def test_operators_and_quotes_in_user_text_are_searched_as_words(engine: PostgresEngine) -> None:
    nasty = "'; DROP TABLE rankscope; -- & | ! <-> :* \\ ) ( O'Neil's"
    for kind in ("query_string", "match"):  # any of its words matches: d7 has o'neil
        assert "d7" in ids(engine.search(q(nasty, kind=kind, field="text"), 10)), kind
    # as a phrase its words must follow each other, as in no document: nothing, and no SQL error
    assert engine.search(q(nasty, kind="phrase", field="text"), 10) == []
    hits = engine.search(q("O'Neil's back\\slash", kind="phrase", field="text"), 10)
    assert ids(hits) == ["d7"]
    # the table is intact
    assert engine.search(q("flutter"), 10)


# -- match / multi_match ------------------------------------------------------------------------


def test_match_searches_one_field(engine: PostgresEngine) -> None:
    assert set(ids(engine.search(q("wing", kind="match", field="title"), 10))) == {"d1", "d3"}
    assert set(ids(engine.search(q("boundary", kind="match", field="title"), 10))) == {"d2"}
    assert set(ids(engine.search(q("boundary", kind="match", field="text"), 10))) == {"d2", "d4"}
    assert engine.search(q("shock nozzle", kind="match", field="title"), 10)[0].doc_id == "d4"


def test_match_extra_fields_use_postgres_tokens(engine: PostgresEngine) -> None:
    assert ids(engine.search(q("cooking", kind="match", field="tags"), 10)) == ["d5"]
    # PostgreSQL's parser reads a path as one token: the whole path matches it
    assert ids(engine.search(q("kitchen/pasta.md", kind="match", field="path"), 10)) == ["d5"]
    # extra fields are part of the all-fields vector too
    assert "d5" in ids(engine.search(q("food"), 10))


def test_match_errors_name_the_problem(engine: PostgresEngine) -> None:
    with pytest.raises(EngineError, match=r"'nosuch'.*indexed fields: title, text, path, tags"):
        engine.search(q("x", kind="match", field="nosuch"), 10)
    with pytest.raises(EngineError, match="names no field"):
        engine.search(q("x", kind="match"), 10)
    with pytest.raises(EngineError, match="lists no fields"):
        engine.search(q("x", kind="multi_match"), 10)


def test_multi_match_sums_boosted_field_ranks(postgres_dsn: str) -> None:
    fields = (("title", 3.0), ("text", 1.0))
    query = q("boundary layer", kind="multi_match", fields=fields)
    with (
        PostgresEngine(postgres_dsn) as summed,
        PostgresEngine(postgres_dsn, multi_match="max") as best,
    ):
        summed.index(DOCS)
        best.index(DOCS)
        s = {h.doc_id: h.score for h in summed.search(query, 10)}
        m = {h.doc_id: h.score for h in best.search(query, 10)}
        title = {
            h.doc_id: h.score
            for h in summed.search(q("boundary layer", kind="match", field="title"), 10)
        }
        text = {
            h.doc_id: h.score
            for h in summed.search(q("boundary layer", kind="match", field="text"), 10)
        }
    assert set(s) == set(m) == {"d2", "d4"}
    assert s["d2"] == pytest.approx(3 * title["d2"] + text["d2"], rel=1e-5)
    assert m["d2"] == pytest.approx(max(3 * title["d2"], text["d2"]), rel=1e-5)
    assert s["d4"] == pytest.approx(text["d4"], rel=1e-5) and m["d4"] == pytest.approx(text["d4"])
    assert max(s, key=s.__getitem__) == "d2"


# -- phrase -------------------------------------------------------------------------------------


def test_phrase_is_ordered_and_adjacent(engine: PostgresEngine) -> None:
    assert set(ids(engine.search(q("boundary layer", kind="phrase"), 10))) == {"d2", "d4"}
    assert engine.search(q("layer boundary", kind="phrase"), 10) == []
    assert ids(engine.search(q("supersonic flow", kind="phrase"), 10)) == ["d1"]
    # stop words keep their place: "flow over wings" is flow <2> wing
    assert ids(engine.search(q("flow over wings", kind="phrase", field="title"), 10)) == ["d1"]
    assert engine.search(q("flow wings", kind="phrase", field="title"), 10) == []


def test_phrase_slop_allows_extra_distance(engine: PostgresEngine) -> None:
    assert ids(engine.search(q("supersonic flow", kind="phrase", field="text"), 10)) == ["d1"]
    assert set(
        ids(engine.search(q("supersonic flow", kind="phrase", field="text", slop=1), 10))
    ) == {"d1", "d4"}
    # terms may change order, as in Lucene: a transposition costs 2
    assert engine.search(q("flow supersonic", kind="phrase", field="text", slop=1), 10) == []
    assert "d1" in ids(engine.search(q("flow supersonic", kind="phrase", field="text", slop=2), 10))
    # the phrase's own gaps (stop words) stay; slop adds to them
    assert engine.search(q("shock nozzle", kind="phrase", field="text", slop=1), 10) == []
    assert ids(engine.search(q("shock nozzle", kind="phrase", field="text", slop=3), 10)) == ["d4"]


def test_sloppy_phrase_tsquery_text() -> None:
    assert sloppy_phrase_tsquery([], 2) == ""
    assert sloppy_phrase_tsquery([(3, "flow")], 2) == "'flow'"
    assert sloppy_phrase_tsquery([(1, "a"), (2, "b")], 0) == "'a' <1> 'b'"
    assert sloppy_phrase_tsquery([(2, "b"), (1, "a")], 1) == "(('a' <1> 'b') | ('a' <2> 'b'))"
    three = sloppy_phrase_tsquery([(1, "a"), (3, "b"), (4, "c")], 2)
    chains = three.strip("()").split(") | (")
    assert len(chains) == len(set(chains))
    # in order: the phrase's own gaps 2 and 1 kept, extra distances adding up to at most 2
    assert "'a' <2> 'b' <1> 'c'" in chains and "'a' <4> 'b' <1> 'c'" in chains
    assert "'a' <3> 'b' <2> 'c'" in chains and "'a' <2> 'b' <3> 'c'" in chains
    # reordered, as Lucene allows: b and c swapped (c moved back by 2) is within slop 2
    assert "'a' <1> 'c' <1> 'b'" in chains
    assert "'c' <1> 'b' <1> 'a'" not in chains  # all three reversed: a match length of 5
    assert sloppy_phrase_tsquery([(1, "a"), (2, "b")], 2).count("'b' <1> 'a'") == 1
    with pytest.raises(EngineError, match="smaller slop"):
        sloppy_phrase_tsquery([(i, f"w{i}") for i in range(12)], 10)


def test_sloppy_phrase_chains_follow_the_shared_phrase_rule() -> None:
    """Every chain is a placement Lucene's rule accepts, and every accepted placement of a
    small phrase in a short document is some chain (checked with ``_phrase.py``, itself checked
    against Lucene in test_engines_anserini.py)."""
    import itertools

    from rankscope.engines.phrase import phrase_matches

    phrase = [(1, "a"), (2, "b"), (4, "c")]  # "a b _ c": a stop word between b and c
    terms = ["a", "b", "", "c"]
    for slop in range(4):
        chains = set(sloppy_phrase_tsquery(phrase, slop).strip("()").split(") | ("))
        for length in range(3, 7):
            for cells in itertools.permutations(range(length), 3):
                doc = ["x"] * length
                for lex, pos in zip("abc", cells, strict=True):
                    doc[pos] = lex
                order = sorted(zip(cells, "abc", strict=True))
                chain = f"'{order[0][1]}'" + "".join(
                    f" <{p - q}> '{lex}'" for (q, _), (p, lex) in itertools.pairwise(order)
                )
                assert (chain in chains) == phrase_matches(doc, terms, slop), (slop, doc)


def test_tsquery_lexeme_quoting() -> None:
    assert tsquery_lexeme("o'neil") == "'o''neil'"
    assert tsquery_lexeme("a\\b") == "'a\\\\b'"


def test_websearch_units() -> None:
    assert websearch_units('wing -flutter "boundary layer" OR shock - x') == (
        ["wing", '"boundary layer"', "shock", "x"],
        ["flutter"],
    )


# -- boolean ------------------------------------------------------------------------------------


def test_boolean_must_should_must_not(engine: PostgresEngine) -> None:
    query = q(kind="boolean", must=("flow",), should=("supersonic",), must_not=("shock",))
    hits = engine.search(query, 10)
    assert set(ids(hits)) == {"d1", "d3"}
    assert hits[0].doc_id == "d1"  # the should term raises the score
    assert set(ids(engine.search(q(kind="boolean", should=("heat", "flutter")), 10))) == {
        "d2",
        "d3",
        "d6",
    }
    # a multi-word term is a phrase
    assert set(ids(engine.search(q(kind="boolean", must=("boundary layer",)), 10))) == {"d2", "d4"}
    assert engine.search(q(kind="boolean", must=("layer boundary",)), 10) == []
    on_title = q(kind="boolean", must=("wing",), field="title")
    assert set(ids(engine.search(on_title, 10))) == {"d1", "d3"}


def test_boolean_without_positive_terms_is_refused(engine: PostgresEngine) -> None:
    with pytest.raises(EngineError, match="no 'must' or 'should'"):
        engine.search(q(kind="boolean", must_not=("flow",)), 10)


# -- weights, ranking options -------------------------------------------------------------------


def test_field_weights_change_the_ranking(postgres_dsn: str) -> None:
    with (
        PostgresEngine(postgres_dsn) as default,
        PostgresEngine(postgres_dsn, weights={"title": "D", "text": "A"}) as swapped,
    ):
        default.index(DOCS)
        swapped.index(DOCS)
        assert default.table != swapped.table
        assert ids(default.search(q("nozzle"), 10)) == ["d6", "d4"]  # d6 has it in its title
        assert ids(swapped.search(q("nozzle"), 10)) == ["d4", "d6"]


def test_ts_rank_and_normalization_options(postgres_dsn: str) -> None:
    with PostgresEngine(postgres_dsn, rank="ts_rank", normalization=32) as eng:
        eng.index(DOCS)
        hits = eng.search(q("supersonic flow"), 10)
        assert set(ids(hits)) == {"d1", "d3", "d4"}
        assert all(0 < h.score < 1 for h in hits)  # 32: rank / (rank + 1)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"rank": "bm25"}, "'rank'"),
        ({"normalization": 99}, "normalization"),
        ({"weights": {"title": "E"}}, "weight label"),
        ({"operator": "xor"}, "operator"),
        ({"multi_match": "avg"}, "multi_match"),
        ({"label_weights": (1, 2)}, "label_weights"),
        ({"create": False}, "needs option 'table'"),
        ({"table": "bad name; drop"}, "option 'table'"),
        ({"columns": {"id": "x"}}, "create=False"),
    ],
)
def test_bad_options_raise_config_errors(options: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        PostgresEngine("host=/nonexistent dbname=x", **options)  # type: ignore[arg-type]


def test_missing_dsn_says_how_to_give_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RANKSCOPE_PG_DSN", raising=False)
    with pytest.raises(ConfigError, match="RANKSCOPE_PG_DSN"):
        PostgresEngine()


def test_unknown_text_search_config_lists_known_ones(postgres_dsn: str) -> None:
    with (
        PostgresEngine(postgres_dsn, config="klingon") as eng,
        pytest.raises(ConfigError, match=r"'klingon'.*english"),
    ):
        eng.index(DOCS)


def test_a_connection_that_fails_its_check_is_not_kept(postgres_dsn: str) -> None:
    # the check runs again on the next use instead of handing out the unchecked connection
    with PostgresEngine(postgres_dsn, config="klingon") as eng:
        for _ in range(2):
            with pytest.raises(ConfigError, match=r"'klingon'"):
                eng.index(DOCS)


def test_a_closed_engine_says_so(postgres_dsn: str) -> None:
    eng = PostgresEngine(postgres_dsn)
    eng.index(DOCS)
    eng.close()
    with pytest.raises(EngineError, match="postgres engine is closed; create a new one"):
        eng.search(q("wings"), 10)


def test_simple_config_does_not_stem(postgres_dsn: str) -> None:
    with PostgresEngine(postgres_dsn, config="simple") as eng:
        eng.index(DOCS)
        assert ids(eng.search(q("wings"), 10)) == ["d1"]
        assert eng.search(q("the"), 10)  # not a stop word in 'simple'


# -- documents, tables --------------------------------------------------------------------------


def test_bad_documents_are_refused(postgres_dsn: str) -> None:
    with PostgresEngine(postgres_dsn) as eng:
        with pytest.raises(EngineError, match="duplicate document id 'a'"):
            eng.index([Document("a", "x"), Document("a", "y")])
        with pytest.raises(EngineError, match="'b' field 'text' contains a NUL"):
            eng.index([Document("b", "x\x00y")])


def test_empty_corpus_indexes_and_finds_nothing(postgres_dsn: str) -> None:
    with PostgresEngine(postgres_dsn) as eng:
        eng.index([])
        assert eng.search(q("flow"), 10) == []


def test_reindexing_replaces_documents(postgres_dsn: str) -> None:
    with PostgresEngine(postgres_dsn, table="reindexed") as eng:
        eng.index(DOCS[:2])
        assert ids(eng.search(q("boundary"), 10)) == ["d2"]
        eng.index([Document("n1", "boundary conditions")])
        assert ids(eng.search(q("boundary"), 10)) == ["n1"]


def _count(dsn: str, table: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()
        assert row is not None
        return int(row[0])


def test_a_content_named_table_is_dropped_on_close_unless_kept(postgres_dsn: str) -> None:
    docs = [Document("t1", "temporary row")]
    with PostgresEngine(postgres_dsn) as eng:
        eng.index(docs)
        table = eng.table
        assert table is not None and _count(postgres_dsn, table) == 1
    with psycopg.connect(postgres_dsn) as conn:
        assert conn.execute("SELECT to_regclass(%s)", [table]).fetchone() == (None,)
    with PostgresEngine(postgres_dsn, drop_on_close=False) as eng:
        eng.index(docs)
    assert _count(postgres_dsn, table) == 1
    with PostgresEngine(postgres_dsn, table="named_kept") as eng:
        eng.index(docs)
    assert _count(postgres_dsn, "named_kept") == 1
    with PostgresEngine(postgres_dsn, drop_on_close=True) as eng:  # clean up the kept one
        eng.index(docs)


def test_same_documents_reuse_the_table(postgres_dsn: str) -> None:
    docs = [Document("r1", "reusable row"), Document("r2", "another row")]
    with PostgresEngine(postgres_dsn, drop_on_close=False) as first:
        first.index(docs)
        table = first.table
        assert table is not None and table.startswith("rankscope_docs_")
    # a row added behind the engine's back survives re-indexing the same corpus: no reload
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(
            f"INSERT INTO \"{table}\" (id, title, text, extra) VALUES ('x', '', 'row', '{{}}')"
        )
    with PostgresEngine(postgres_dsn, drop_on_close=False) as second:
        second.index(docs)
        assert second.table == table
        assert set(ids(second.search(q("row"), 10))) == {"r1", "r2", "x"}
    with PostgresEngine(postgres_dsn, reuse=False, drop_on_close=True) as third:
        third.index(docs)
        assert _count(postgres_dsn, table) == 2
    with psycopg.connect(postgres_dsn) as conn:
        assert conn.execute("SELECT to_regclass(%s)", [table]).fetchone() == (None,)


def test_named_table_is_searchable_by_a_new_engine(postgres_dsn: str) -> None:
    with PostgresEngine(postgres_dsn, table="kept_docs") as eng:
        eng.index(DOCS)
    with PostgresEngine(postgres_dsn, table="kept_docs") as eng:
        assert ids(eng.search(q("cooking", kind="match", field="tags"), 10)) == ["d5"]
    with (
        PostgresEngine(postgres_dsn, table="no_such_table") as eng,
        pytest.raises(EngineError, match="does not exist"),
    ):
        eng.search(q("flow"), 10)


def test_existing_table_with_column_mapping(postgres_dsn: str) -> None:
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS articles")
        conn.execute("CREATE TABLE articles (art_id int, headline text, body text, tsv tsvector)")
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO articles (art_id, headline, body) VALUES (%s, %s, %s)",
                [(1, "Wing flutter", "unsteady flow"), (2, "Heat", "laminar boundary layer")],
            )
        conn.execute(
            "UPDATE articles SET tsv = setweight(to_tsvector('english', headline), 'A') || "
            "to_tsvector('english', body)"
        )
    columns = {"id": "art_id", "title": "headline", "text": "body"}
    with PostgresEngine(postgres_dsn, create=False, table="articles", columns=columns) as eng:
        assert ids(eng.search(q("flutter boundary"), 10)) == ["1", "2"]  # title weighs more
        assert ids(eng.search(q("flutter", kind="match", field="text"), 10)) == []
        assert ids(eng.search(q("laminar boundary", kind="phrase"), 10)) == ["2"]
        with pytest.raises(EngineError, match="does not index"):
            eng.index(DOCS)
    with PostgresEngine(
        postgres_dsn, create=False, table="articles", columns=columns, tsvector_column="tsv"
    ) as eng:
        assert ids(eng.search(q("unsteady"), 10)) == ["1"]
    with (
        PostgresEngine(postgres_dsn, create=False, table="articles", columns={"id": "nope"}) as eng,
        pytest.raises(ConfigError, match=r"no column.*nope.*art_id"),
    ):
        eng.search(q("flow"), 10)


# -- connection ---------------------------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable_server_fails_fast_naming_dsn_without_password() -> None:
    port = _closed_port()
    dsn = f"host=127.0.0.1 port={port} dbname=corpus user=reader password=s3cret"
    eng = PostgresEngine(dsn, connect_timeout=2)
    started = time.monotonic()
    with pytest.raises(EngineError) as info:
        eng.index(DOCS)
    assert time.monotonic() - started < 10
    message = str(info.value)
    assert f"port={port}" in message and "127.0.0.1" in message and "dbname=corpus" in message
    assert "s3cret" not in message
    assert "cannot connect" in message


def test_url_dsn_password_is_redacted() -> None:
    port = _closed_port()
    with pytest.raises(EngineError) as info:
        PostgresEngine(f"postgresql://reader:s3cret@127.0.0.1:{port}/corpus").index(DOCS)
    assert "s3cret" not in str(info.value) and "corpus" in str(info.value)


def test_malformed_dsn_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="invalid PostgreSQL DSN"):
        PostgresEngine("this is not a dsn").index(DOCS)


def test_auto_named_table_follows_the_content(postgres_dsn: str) -> None:
    with PostgresEngine(postgres_dsn) as eng:
        eng.index(DOCS[:2])
        first = eng.table
        eng.index(DOCS[2:4])
        assert eng.table != first
        assert ids(eng.search(q("boundary"), 10)) == ["d4"]
    with PostgresEngine(postgres_dsn) as eng:
        eng.index(DOCS[:2])
        assert eng.table == first
        assert ids(eng.search(q("boundary"), 10)) == ["d2"]


def test_redact_dsn() -> None:
    assert "s3cret" not in redact_dsn("host=h password=s3cret dbname=d")
    assert "dbname=d" in redact_dsn("host=h password=s3cret dbname=d")
    assert "s3cret" not in redact_dsn("not a dsn password = s3cret ===")
    assert "s3cret" not in redact_dsn("postgresql://u:s3cret@h/d")


def test_registered_under_postgres(postgres_dsn: str) -> None:
    with create_engine("postgres", dsn=postgres_dsn) as eng:
        assert isinstance(eng, PostgresEngine)
        eng.index(DOCS[:3])
        assert eng.search(q("flutter"), 5)[0].doc_id == "d3"
