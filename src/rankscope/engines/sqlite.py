"""SQLite FTS5 with its bm25() ranking: the embedded default engine (stdlib ``sqlite3``).

One FTS5 table holds the document id (unindexed) and one column per field: ``title``, ``text``
and every extra field found in the documents. Query text is split into words and each word is
quoted as an FTS5 string, so nothing in user text is read as FTS5 syntax. Translation:

- ``query_string``: ``"w1" OR "w2" ...`` over all columns. FTS5's bm25() cannot weight a
  phrase, so a word that occurs n times is n phrases (it counts n times, as BM25's bag of words
  asks) in a query of at most :data:`WEIGHTED_WORDS` words; a longer query has one phrase per
  distinct word (a repeated word counts once), since bm25()'s time grows much faster than its
  number of phrases (at most :data:`~rankscope.engines._text.MAX_QUERY_TERMS` distinct words);
- ``match``: the same, restricted by a column filter ``{col} : (...)``;
- ``multi_match``: column filter over the listed fields, bm25() column weights from the boosts;
- ``phrase``: ``"w1 w2 w3"``; with ``slop > 0``: ``NEAR("w1" "w2" "w3", slop)`` (FTS5's NEAR is
  unordered: at most ``slop`` words between the first and last word);
- ``boolean``: rows matching ``(must AND ...) NOT (must_not OR ...)`` (or the ``should`` group when
  there is no ``must``), ranked by bm25() of ``must OR should``, so ``should`` terms only raise
  the score, as in Lucene.

bm25() is lower-is-better (negative); hits carry ``-bm25()`` so higher is better.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import ClassVar

from rankscope.engines._text import (
    boolean_clauses,
    check_phrase_length,
    document_fields,
    field_names,
    indexed_name,
    term_counts,
    words,
)
from rankscope.engines.base import Document, Engine, Hit, Query, QueryKind, register_engine
from rankscope.engines.stream import reiterable
from rankscope.errors import ConfigError, EngineError

# a specific name: a user may point ``path`` at a database that holds other tables
_TABLE = "rankscope_fts"
#: the longest query (in words) whose repeated words are repeated phrases: FTS5's time grows
#: much faster than the number of phrases, so a longer query has each distinct word once
WEIGHTED_WORDS = 64


def fts_string(text: str) -> str:
    """An FTS5 string literal: double quotes inside are doubled."""
    return '"' + text.replace('"', '""') + '"'


@register_engine("sqlite")
class SqliteEngine(Engine):
    """SQLite FTS5 BM25.

    Options: ``path`` (a SQLite file to hold the index; default: in memory), ``tokenizer`` (an
    FTS5 ``tokenize`` value, default ``"porter unicode61"``), ``k1`` and ``b`` are fixed by FTS5
    (1.2 and 0.75).
    """

    name = "sqlite"
    supported_kinds: ClassVar[frozenset[QueryKind]] = frozenset(
        {"query_string", "match", "multi_match", "phrase", "boolean"}
    )

    def __init__(self, path: str | Path | None = None, tokenizer: str = "porter unicode61") -> None:
        if not isinstance(tokenizer, str) or not tokenizer.strip():
            raise ConfigError(
                "sqlite engine option 'tokenizer' must be a non-empty FTS5 tokenize value",
                value=tokenizer,
                hint="e.g. tokenizer: 'porter unicode61'",
            )
        self.path = None if path is None or str(path) == ":memory:" else Path(path)
        self.tokenizer = tokenizer
        self._conn: sqlite3.Connection | None = None
        self._columns: dict[str, str] = {}  # field name -> column name
        self._closed = False

    # -- indexing -------------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self._closed:
            raise EngineError("sqlite engine is closed; create a new one to index again")
        if self._conn is None:
            target = ":memory:" if self.path is None else str(self.path)
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                self._conn = sqlite3.connect(target, check_same_thread=False)
            except sqlite3.Error as exc:
                raise EngineError(f"sqlite engine cannot open {target!r}: {exc}") from exc
        return self._conn

    def index(self, docs: Iterable[Document]) -> None:
        docs = reiterable(docs)  # read once for the columns, unless it knows its fields
        # columns get neutral names so any field name is safe in SQL and FTS5 column filters
        fields = document_fields(docs)
        self._columns = {f: f"c{i}" for i, f in enumerate(fields)}
        conn = self._connect()
        cols = ", ".join(self._columns.values())
        tokenize = "'" + self.tokenizer.replace("'", "''") + "'"
        try:
            with conn:
                conn.execute(f"DROP TABLE IF EXISTS {_TABLE}")
                conn.execute(
                    f"CREATE VIRTUAL TABLE {_TABLE} USING fts5("
                    f"doc_id UNINDEXED, {cols}, tokenize={tokenize})"
                )
                marks = ", ".join("?" * (len(fields) + 1))
                conn.executemany(f"INSERT INTO {_TABLE} VALUES ({marks})", _rows(docs, fields[2:]))
        except sqlite3.Error as exc:
            raise EngineError(
                f"sqlite engine could not build its FTS5 index (tokenizer={self.tokenizer!r}): "
                f"{exc}. Check the tokenizer option (e.g. 'porter unicode61' or 'trigram')"
            ) from exc

    # -- searching ------------------------------------------------------------------------------

    def _column(self, query: Query, field: str) -> str:
        return indexed_name(self._columns, query, field, "sqlite")

    def _weights(self, boosts: dict[str, float] | None) -> str:
        # first weight is for the unindexed doc_id column
        ws = [0.0] + [1.0 if boosts is None else boosts.get(c, 0.0) for c in self._columns.values()]
        return ", ".join(repr(float(w)) for w in ws)

    def translate(self, query: Query) -> tuple[str, str | None, dict[str, float] | None]:
        """The FTS5 expression ranking the query, an optional filter expression, column boosts.

        The expression is ``""`` when the query has no searchable word.
        """
        kind = query.kind
        if kind == "boolean":
            must, should, must_not = boolean_clauses(query)
            rank = " OR ".join(_phrase(t) for t in must + should)
            base = " AND ".join(_phrase(t) for t in must) or " OR ".join(_phrase(t) for t in should)
            filt = f"({base})"
            if must_not:
                filt += " NOT (" + " OR ".join(_phrase(t) for t in must_not) + ")"
            return rank, filt, None
        cols = [self._column(query, f) for f in field_names(query)]
        boosts = None
        if kind == "multi_match":
            if not cols:
                raise EngineError(f"multi_match query {query.id!r} lists no fields")
            boosts = {}
            for (_, boost), col in zip(query.fields, cols, strict=True):
                boosts[col] = float(boost)
        toks = words(query.text)
        if not toks:
            return "", None, boosts
        if kind == "phrase":
            check_phrase_length(toks, query)
            if query.slop > 0 and len(toks) > 1:
                expr = "NEAR(" + " ".join(fts_string(t) for t in toks) + f", {int(query.slop)})"
            else:
                expr = fts_string(" ".join(toks))
        else:
            distinct = term_counts(toks, query, self.name)
            phrases = toks if len(toks) <= WEIGHTED_WORDS else list(distinct)
            expr = "(" + " OR ".join(fts_string(t) for t in phrases) + ")"
        if cols:
            expr = "{" + " ".join(dict.fromkeys(cols)) + "} : " + expr
        return expr, None, boosts

    def _search(self, query: Query, k: int) -> list[Hit]:
        conn = self._connect()
        if not self._columns:
            return []
        expr, filt, boosts = self.translate(query)
        if not expr:
            return []
        rank = f"bm25({_TABLE}, {self._weights(boosts)})"
        sql = f"SELECT doc_id, {rank} FROM {_TABLE} WHERE {_TABLE} MATCH ?"
        params: list[object] = [expr]
        if filt is not None:
            sql += f" AND rowid IN (SELECT rowid FROM {_TABLE} WHERE {_TABLE} MATCH ?)"
            params.append(filt)
        sql += f" ORDER BY {rank}, doc_id LIMIT ?"
        params.append(k)
        try:
            rows = conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise EngineError(
                f"sqlite engine failed on query {query.id!r} (FTS5 expression {expr!r}): {exc}"
            ) from exc
        # FTS5 bm25() is negative, lower is better; 0.0 - x avoids a -0.0 score
        return [Hit(doc_id=str(d), score=0.0 - float(s)) for d, s in rows]

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._closed = True


def _phrase(term: str) -> str:
    return fts_string(" ".join(words(term)))


def _rows(docs: Iterable[Document], extra: Sequence[str]) -> Iterator[tuple[str, ...]]:
    """``(id, title, text, *extra fields)`` per document, as the FTS5 table's columns."""
    if not extra:  # the common case, kept to the cost of the raw insert
        return ((d.id, d.title, d.text) for d in docs)
    return ((d.id, d.title, d.text, *[d.fields.get(f, "") for f in extra]) for d in docs)
