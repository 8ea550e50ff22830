"""Engines under real queries: long, repeated and hostile query text over Cranfield.

The lexical engines used to turn every occurrence of a word into its own clause: a 10,000-
character query took seconds (sqlite) to minutes (postgres) over Cranfield's 1,400 abstracts,
and exceeded Lucene's 1,024-clause limit (anserini). Now each distinct term is one clause,
weighted by its count where the engine can weight a clause (tantivy, anserini) and counted once
where it cannot (duckdb, postgres, and sqlite past 64 words); a query with more distinct terms
than an engine takes fails alone, with a :class:`~rankscope.errors.QueryError`. Query text that
no engine can take (a lone UTF-16 surrogate) is a ``QueryError`` on every engine, and a NUL
separates words everywhere (PostgreSQL text cannot hold one).

Time guards are generous (this code answers each query below in well under a second on two
CPU cores); they only say "finishes".
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from prerequisites import shared_data_root
from rankscope.engines import Document, Engine, Hit, Query, create_engine
from rankscope.engines._text import MAX_QUERY_TERMS
from rankscope.engines.postgres import MAX_LEXEMES
from rankscope.errors import QueryError

#: seconds any one query below may take
GUARD_S = 10.0

LEXICAL = ["sqlite", "tantivy", "duckdb", "anserini", "postgres"]
#: engines that weight a repeated term by its count; the others count it once (sqlite past 64
#: words)
WEIGHTING = {"tantivy", "anserini"}
DENSE = ["vector", "pgvector"]


def shared_data() -> Path:
    return shared_data_root()


def _param(name: str) -> object:
    marks = [pytest.mark.postgres] if name in ("postgres", "pgvector") else []
    return pytest.param(name, id=name, marks=marks)


@pytest.fixture(scope="module")
def cranfield() -> list[Document]:
    path = shared_data() / "cranfield" / "beir" / "corpus.jsonl"
    if not path.is_file():
        pytest.skip(f"Cranfield BEIR data not found at {path} (set RANKSCOPE_SHARED_DATA)")
    with path.open() as fh:
        return [Document(str(r["_id"]), r["text"], title=r["title"]) for r in map(json.loads, fh)]


@pytest.fixture(scope="module")
def cranfield_queries() -> list[str]:
    path = shared_data() / "cranfield" / "beir" / "queries.jsonl"
    with path.open() as fh:
        return [str(r["text"]) for r in map(json.loads, fh)]


@pytest.fixture(scope="module")
def hostile() -> dict[str, str]:
    path = shared_data() / "hostile" / "strings.jsonl"
    if not path.is_file():
        pytest.skip(f"hostile strings not found at {path} (set RANKSCOPE_SHARED_DATA)")
    with path.open() as fh:
        return {r["name"]: r["text"] for r in map(json.loads, fh)}


@pytest.fixture(scope="module")
def indexed(
    cranfield: list[Document], request: pytest.FixtureRequest
) -> Iterator[Callable[[str], Engine]]:
    """Each engine built once for the module, with Cranfield indexed."""
    made: dict[str, Engine] = {}

    def get(name: str) -> Engine:
        if name not in made:
            made[name] = _build(name, request)
            made[name].index(cranfield)
        return made[name]

    yield get
    for engine in made.values():
        engine.close()


def _build(name: str, request: pytest.FixtureRequest) -> Engine:
    if name == "tantivy":
        pytest.importorskip("tantivy")
    if name == "duckdb":
        pytest.importorskip("duckdb_extension_fts")
    if name == "anserini":
        pytest.importorskip("jnius_config")  # not jnius: importing it starts the JVM
        request.getfixturevalue("anserini_available")
    if name == "postgres":
        pytest.importorskip("psycopg")
        return create_engine("postgres", dsn=request.getfixturevalue("postgres_dsn"))
    if name == "pgvector":
        pytest.importorskip("psycopg")
        dsn = request.getfixturevalue("pgvector_dsn")
        return create_engine("pgvector", dsn=dsn, model="hashing:256")
    if name == "vector":
        return create_engine("vector", model="hashing:256")
    return create_engine(name)


def timed(engine: Engine, query: Query, k: int = 100) -> list[Hit]:
    started = time.perf_counter()
    hits = engine.search(query, k)
    elapsed = time.perf_counter() - started
    assert elapsed < GUARD_S, f"{engine.name}: {len(query.text)}-character query took {elapsed}s"
    return hits


@pytest.mark.parametrize("name", [_param(n) for n in LEXICAL])
def test_a_repeated_word_is_one_weighted_term(indexed: Callable[[str], Engine], name: str) -> None:
    """667 times "boundary layer" (10,004 characters) ranks as "boundary layer": scores 667
    times as high where the engine weights a term by its count, the same where it counts a
    repeated term once."""
    engine = indexed(name)
    once = timed(engine, Query("once", "boundary layer"))
    long = timed(engine, Query("long", " ".join(["boundary layer"] * 667)))
    assert len(once) == 100
    assert [h.doc_id for h in long] == [h.doc_id for h in once]
    factor = 667 if name in WEIGHTING else 1
    if name in WEIGHTING:  # float32 scores: a boost is not a sum to the last bits
        assert [h.score for h in long] == pytest.approx([factor * h.score for h in once], rel=1e-4)
    else:
        assert [h.score for h in long] == [h.score for h in once]


def test_sqlite_counts_a_repeated_word_again_up_to_64_words(
    indexed: Callable[[str], Engine],
) -> None:
    """FTS5's bm25() weighs a word once per phrase: up to 64 words a repeated word is repeated
    (ordinary queries rank as before), past that each distinct word is one phrase."""
    engine = indexed("sqlite")
    once = timed(engine, Query("once", "boundary layer"))
    for n, factor in ((32, 32), (33, 1)):  # 64 words, then 66
        hits = timed(engine, Query("n", " ".join(["boundary layer"] * n)))
        assert [h.doc_id for h in hits] == [h.doc_id for h in once]
        assert [h.score for h in hits] == pytest.approx([factor * h.score for h in once])


@pytest.mark.parametrize("name", [_param(n) for n in LEXICAL])
def test_ten_thousand_character_queries_finish(
    indexed: Callable[[str], Engine],
    name: str,
    hostile: dict[str, str],
    cranfield_queries: list[str],
) -> None:
    engine = indexed(name)
    for key in ("long_repeat_10k", "long_varied_10k"):
        text = hostile[key]
        assert len(text) > 10_000
        timed(engine, Query(key, text))  # their words are not Cranfield's: few hits, if any
    # Cranfield's own words: every query's text, cut to 10,000 characters (1,646 words, 546
    # distinct, 427 distinct PostgreSQL lexemes)
    text = " ".join(cranfield_queries)[:10_000]
    query = Query("cranfield-10k", text)
    if name == "postgres":  # more lexemes than ts_rank_cd ranks in bounded time
        started = time.perf_counter()
        with pytest.raises(QueryError, match=rf"'cranfield-10k' has 427 .*at most {MAX_LEXEMES}"):
            engine.search(query, 100)
        assert time.perf_counter() - started < GUARD_S
    else:
        assert len(timed(engine, query)) == 100
    assert timed(engine, Query("after", "boundary layer"))  # the engine still answers


@pytest.mark.parametrize("name", [_param(n) for n in LEXICAL])
def test_too_many_distinct_terms_fail_that_query_only(
    indexed: Callable[[str], Engine], name: str
) -> None:
    engine = indexed(name)
    # distinct words that every analyser keeps as distinct terms
    words = [
        f"w{chr(97 + i // 26 // 26 % 26)}{chr(97 + i // 26 % 26)}{chr(97 + i % 26)}x"
        for i in range(MAX_QUERY_TERMS + 1)
    ]
    started = time.perf_counter()
    with pytest.raises(QueryError, match=r"query 'wide' has 1025 distinct terms"):
        engine.search(Query("wide", " ".join(words)), 10)
    assert time.perf_counter() - started < GUARD_S
    assert timed(engine, Query("after", "boundary layer"))


@pytest.mark.parametrize("name", [_param(n) for n in LEXICAL])
def test_a_nul_separates_words(indexed: Callable[[str], Engine], name: str) -> None:
    engine = indexed(name)
    spaced = timed(engine, Query("spaced", "boundary layer"))
    assert timed(engine, Query("nul", "boundary\x00layer")) == spaced


@pytest.mark.parametrize("name", [_param(n) for n in LEXICAL + DENSE])
@pytest.mark.parametrize("key", ["lone_high_surrogate", "lone_low_surrogate"])
def test_a_lone_surrogate_is_a_query_error(
    indexed: Callable[[str], Engine], name: str, key: str, hostile: dict[str, str]
) -> None:
    engine = indexed(name)
    with pytest.raises(QueryError, match=r"query 'bad': its text holds a lone UTF-16 surrogate"):
        engine.search(Query("bad", hostile[key]), 10)
    assert timed(engine, Query("after", "boundary layer"), 10)
