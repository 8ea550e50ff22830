"""DuckDB full-text search (the ``fts`` extension, BM25 by ``match_bm25``): embedded, like SQLite.

Documents go into one table (``rankscope_docs``: a row number, the id, one column per field,
named ``c0``, ``c1``... so any field name is safe), read in one pass in batches; then
``PRAGMA create_fts_index`` builds the index (stemmer, stop words, accent stripping as options).

The ``fts`` extension is not part of the duckdb wheel, and ``INSTALL fts`` downloads it. The
``duckdb`` extra installs ``duckdb-extension-fts``, a PyPI package that ships the extension
built for one duckdb version (and pins duckdb to it), so nothing is downloaded at run time; an
extension already installed in DuckDB's own folder (``INSTALL fts`` on a connected machine) is
used first.

Translation (query text is a bound parameter of ``match_bm25``, which tokenizes it itself:
nothing in it is syntax):

- ``query_string``: ``match_bm25`` over every field (DuckDB scores the fields as one bag, and
  a repeated query term once);
- ``match``: ``match_bm25(..., fields := 'cN')`` on the one field;
- ``multi_match``: ``sum(boost_f * match_bm25(field f))`` over the listed fields, a document
  matching when any field does (Elasticsearch's ``most_fields``);
- ``phrase``: the fts index has no positions, so documents holding every phrase word
  (``conjunctive := 1``, ranked by their BM25) are kept when the field's tokens, put through the
  index's own tokenizer and stemmer, hold the phrase within ``slop`` by Lucene's rule (terms may
  be reordered, a transposition costs 2; see ``phrase.py``), checked by a Python function
  registered in DuckDB. Stop words keep their place in that check;
- ``boolean``: each term must (not) match (a multi-word term as a phrase); ranked by
  ``match_bm25`` of all positive words, so ``should`` terms only raise the score.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar

from rankscope.engines._text import (
    boolean_clauses,
    check_phrase_length,
    field_names,
    term_counts,
    words,
)
from rankscope.engines.base import Document, Engine, Hit, Query, QueryKind, register_engine
from rankscope.engines.phrase import phrase_matches
from rankscope.errors import ConfigError, EngineError
from rankscope.util.extras import install_command

# Imported where used, so that this module imports without them: duckdb (the duckdb extra), and
# pyarrow (when documents are loaded).

_TABLE = "rankscope_docs"
_SCHEMA = f"fts_main_{_TABLE}"
_BATCH = 10_000
_STEMMERS = frozenset(
    {
        "arabic", "basque", "catalan", "danish", "dutch", "english", "finnish", "french",
        "german", "greek", "hindi", "hungarian", "indonesian", "irish", "italian", "lithuanian",
        "nepali", "norwegian", "porter", "portuguese", "romanian", "russian", "serbian",
        "spanish", "swedish", "tamil", "turkish", "none",
    }
)  # fmt: skip
EXTRA_HINT = f"{install_command('duckdb')} (duckdb with its fts extension from PyPI)"


def import_duckdb() -> Any:
    try:
        import duckdb
    except ImportError as exc:
        raise EngineError(
            f"engine 'duckdb' needs the duckdb package ({exc}); {EXTRA_HINT}"
        ) from exc
    return duckdb


def packaged_fts_extension(version: str) -> Path | None:
    """The ``fts`` extension file the ``duckdb-extension-fts`` package ships for duckdb
    ``version``, or None when that package (for that version) is not installed."""
    spec = importlib.util.find_spec("duckdb_extension_fts")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        path = Path(root) / "extensions" / f"v{version.lstrip('v')}" / "fts.duckdb_extension"
        if path.is_file():
            return path
    return None


def load_fts(conn: Any, version: str) -> None:
    """Load the fts extension into ``conn``: DuckDB's own install first, then the packaged one."""
    duckdb = import_duckdb()
    try:
        conn.execute("LOAD fts")
        return
    except duckdb.Error as first:
        path = packaged_fts_extension(version)
        if path is None:
            raise EngineError(
                f"engine 'duckdb': DuckDB {version} cannot load its full-text search extension "
                f"'fts' ({' '.join(str(first).split())[:200]}). Install the extension package "
                f"built for this DuckDB: {EXTRA_HINT}, or run INSTALL fts once on a machine "
                f"with internet access"
            ) from first
    try:
        conn.execute("LOAD '" + str(path).replace("'", "''") + "'")
    except duckdb.Error as exc:
        raise EngineError(
            f"engine 'duckdb': loading the fts extension from {path} failed: {exc}. Reinstall "
            f"duckdb and duckdb-extension-fts of the same version ({EXTRA_HINT})"
        ) from exc


@register_engine("duckdb")
class DuckdbEngine(Engine):
    """DuckDB FTS BM25.

    Options: ``path`` (a DuckDB file to hold the table and index; default: in memory),
    ``stemmer`` (a Snowball language, ``porter`` (default) or ``none``), ``stopwords``
    (``english`` (default) or ``none``), ``ignore`` (regular expression of characters to drop;
    DuckDB's default keeps letters a-z after lowercasing and accent stripping), ``strip_accents``,
    ``lower``, ``k1`` (1.2), ``b`` (0.75) and ``threads`` (DuckDB's worker threads; default
    DuckDB's, one per core).

    DuckDB sums a document's BM25 terms on several threads in an order that varies, so scores
    may differ in their last bits (1e-15) between identical runs, and a run file's bytes with
    them (rankings stay the same unless two scores are that close); ``threads=1`` makes them
    identical from run to run.
    """

    name = "duckdb"
    supported_kinds: ClassVar[frozenset[QueryKind]] = frozenset(
        {"query_string", "match", "multi_match", "phrase", "boolean"}
    )

    def __init__(
        self,
        path: str | Path | None = None,
        stemmer: str = "porter",
        stopwords: str = "english",
        ignore: str = r"(\.|[^a-z])+",
        strip_accents: bool = True,
        lower: bool = True,
        k1: float = 1.2,
        b: float = 0.75,
        threads: int | None = None,
    ) -> None:
        if not isinstance(stemmer, str) or stemmer.lower() not in _STEMMERS:
            raise ConfigError(
                "duckdb engine option 'stemmer' is unknown",
                value=stemmer,
                hint=f"use one of {', '.join(sorted(_STEMMERS))}",
            )
        if stopwords not in ("english", "none"):
            raise ConfigError(
                "duckdb engine option 'stopwords' must be 'english' or 'none'", value=stopwords
            )
        if not (float(k1) >= 0 and 0 <= float(b) <= 1):
            raise ConfigError(
                "duckdb engine options 'k1' and 'b' need k1 >= 0 and 0 <= b <= 1",
                value={"k1": k1, "b": b},
            )
        if threads is not None and (
            isinstance(threads, bool) or not isinstance(threads, int) or threads < 1
        ):
            raise ConfigError(
                "duckdb engine option 'threads' must be a whole number of at least 1",
                value=threads,
                hint="threads: 1 gives scores identical from run to run",
            )
        self.threads = threads
        self._duckdb = import_duckdb()
        self.path = None if path is None or str(path) == ":memory:" else Path(path)
        self.stemmer = stemmer.lower()
        self.stopwords = stopwords
        self.ignore = str(ignore)
        self.strip_accents = bool(strip_accents)
        self.lower = bool(lower)
        self.k1 = float(k1)
        self.b = float(b)
        self._conn: Any = None
        self._columns: dict[str, str] = {}  # field name -> column name
        self._indexed = False
        self._closed = False

    # -- connection -----------------------------------------------------------------------------

    def _connect(self) -> Any:
        if self._closed:
            raise EngineError("duckdb engine is closed; create a new one")
        if self._conn is None:
            target = ":memory:" if self.path is None else str(self.path)
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                conn = self._duckdb.connect(target)
            except self._duckdb.Error as exc:
                raise EngineError(f"duckdb engine cannot open {target!r}: {exc}") from exc
            if self.threads is not None:
                conn.execute(f"SET threads = {int(self.threads)}")
            load_fts(conn, self._duckdb.__version__)
            conn.create_function(
                "rankscope_phrase",
                _phrase_udf,
                ["VARCHAR[]", "VARCHAR[]", "INTEGER"],
                "BOOLEAN",
                null_handling="special",
            )
            self._conn = conn
        return self._conn

    # -- indexing -------------------------------------------------------------------------------

    def index(self, docs: Iterable[Document]) -> None:
        import pyarrow as pa

        conn = self._connect()
        self._indexed = False
        conn.execute(f"DROP TABLE IF EXISTS {_TABLE}")
        conn.execute(f"DROP TABLE IF EXISTS {_TABLE}_extra")
        conn.execute(f"CREATE TABLE {_TABLE} (rid BIGINT, id VARCHAR, c0 VARCHAR, c1 VARCHAR)")
        conn.execute(f"CREATE TABLE {_TABLE}_extra (rid BIGINT, field VARCHAR, value VARCHAR)")
        extra: dict[str, None] = {}
        count = 0
        for batch in _batches(docs, _BATCH):
            rows: dict[str, list[Any]] = {"rid": [], "id": [], "c0": [], "c1": []}
            ext: dict[str, list[Any]] = {"rid": [], "field": [], "value": []}
            for d in batch:
                rows["rid"].append(count)
                rows["id"].append(d.id)
                rows["c0"].append(d.title)
                rows["c1"].append(d.text)
                for f, v in d.fields.items():
                    if f in ("title", "text"):
                        continue
                    extra.setdefault(f, None)
                    ext["rid"].append(count)
                    ext["field"].append(f)
                    ext["value"].append(v)
                count += 1
            main_batch = pa.table(rows)  # noqa: F841 - read by DuckDB's replacement scan
            conn.execute(f"INSERT INTO {_TABLE} SELECT * FROM main_batch")
            if ext["rid"]:
                extra_batch = pa.table(ext)  # noqa: F841
                conn.execute(f"INSERT INTO {_TABLE}_extra SELECT * FROM extra_batch")
        self._columns = {"title": "c0", "text": "c1"}
        for i, f in enumerate(extra, start=2):
            col = f"c{i}"
            self._columns[f] = col
            conn.execute(f"ALTER TABLE {_TABLE} ADD COLUMN {col} VARCHAR DEFAULT ''")
            conn.execute(
                f"UPDATE {_TABLE} AS d SET {col} = e.value FROM {_TABLE}_extra AS e "
                f"WHERE e.rid = d.rid AND e.field = ?",
                [f],
            )
        conn.execute(f"DROP TABLE {_TABLE}_extra")
        if count == 0:
            return
        cols = ", ".join(f"'{c}'" for c in self._columns.values())
        try:
            # a PRAGMA takes no bound parameters: the option values go in as SQL literals
            conn.execute(
                f"PRAGMA create_fts_index('{_TABLE}', 'rid', {cols}, "
                f"stemmer = {_literal(self.stemmer)}, stopwords = {_literal(self.stopwords)}, "
                f"ignore = {_literal(self.ignore)}, strip_accents = {int(self.strip_accents)}, "
                f"lower = {int(self.lower)}, overwrite = 1)"
            )
        except self._duckdb.Error as exc:
            raise EngineError(
                f"duckdb engine could not build its full-text index: {exc}. Check the options "
                f"stemmer={self.stemmer!r}, ignore={self.ignore!r}"
            ) from exc
        self._indexed = True

    # -- searching ------------------------------------------------------------------------------

    def _column(self, query: Query, field: str) -> str:
        try:
            return self._columns[field]
        except KeyError:
            known = ", ".join(self._columns) or "(nothing indexed yet)"
            raise EngineError(
                f"query {query.id!r} names field {field!r}, which the duckdb index does not "
                f"have; indexed fields: {known}"
            ) from None

    def _bm25(
        self, text: str, column: str | None, conjunctive: bool = False
    ) -> tuple[str, list[Any]]:
        """A ``match_bm25`` call and its parameters (NULL where the document does not match)."""
        sql = f"{_SCHEMA}.match_bm25(rid, ?, fields := ?, k := ?, b := ?, conjunctive := ?)"
        return sql, [text, column, self.k1, self.b, int(conjunctive)]

    def _phrase(
        self, text: str, columns: list[str], slop: int
    ) -> tuple[str, list[Any], str, list[Any]]:
        """(score expression, its parameters, condition, its parameters) of a phrase over
        ``columns`` (all fields when empty)."""
        toks = " ".join(words(text))
        score, params = self._bm25(toks, ",".join(columns) if columns else None, conjunctive=True)
        targets = columns or list(self._columns.values())
        checks = " OR ".join(
            f"rankscope_phrase({self._analyse(c)}, {self._analyse('?')}, ?)" for c in targets
        )
        check_params: list[Any] = []
        for _ in targets:
            check_params += [toks, int(slop)]
        cond = f"({score}) IS NOT NULL AND ({checks})"
        return score, params, cond, params + check_params

    def _analyse(self, expr: str) -> str:
        """SQL giving the index's tokens of ``expr`` (a column or ``?``), stemmed as indexed."""
        stem = f"stem(t, '{self.stemmer}')" if self.stemmer != "none" else "t"
        return f"list_transform({_SCHEMA}.tokenize({expr}), t -> {stem})"

    def _search(self, query: Query, k: int) -> list[Hit]:
        conn = self._connect()
        if not self._indexed:
            return []
        kind = query.kind
        where: str
        params: list[Any]
        if kind == "boolean":
            must, should, must_not = boolean_clauses(query)
            conds: list[str] = []
            cparams: list[Any] = []
            for group, join in ((must, " AND "), (should if not must else [], " OR ")):
                if not group:
                    continue
                parts = []
                for term in group:
                    c, p = self._term_condition(term)
                    parts.append(c)
                    cparams += p
                conds.append("(" + join.join(parts) + ")")
            for term in must_not:
                c, p = self._term_condition(term)
                conds.append(f"NOT coalesce({c}, false)")
                cparams += p
            positive = " ".join(w for t in must + should for w in words(t))
            score, sparams = self._bm25(positive, None)
            select = f"coalesce({score}, 0.0)"
            where, params = " AND ".join(conds), sparams + cparams
        else:
            cols = [self._column(query, f) for f in field_names(query)]
            toks = words(query.text)
            if not toks:
                return []
            if kind == "phrase":
                check_phrase_length(toks, query)
            else:  # match_bm25 counts each distinct term once itself; this bounds the work
                term_counts(toks, query, self.name)
            if kind == "multi_match":
                if not cols:
                    raise EngineError(f"multi_match query {query.id!r} lists no fields")
                terms, conds_mm, params = [], [], []
                for (_, boost), col in zip(query.fields, cols, strict=True):
                    s, p = self._bm25(query.text, col)
                    terms.append(f"? * coalesce({s}, 0.0)")
                    params += [float(boost), *p]
                for col in cols:
                    s, p = self._bm25(query.text, col)
                    conds_mm.append(f"({s}) IS NOT NULL")
                    params += p
                select = "(" + " + ".join(terms) + ")"
                where = "(" + " OR ".join(conds_mm) + ")"
            elif kind == "phrase":
                select, sparams, where, wparams = self._phrase(query.text, cols, int(query.slop))
                params = sparams + wparams
            else:  # query_string, match
                s, p = self._bm25(query.text, cols[0] if cols else None)
                select, where, params = s, f"({s}) IS NOT NULL", p + p
        sql = (
            f"SELECT id, score FROM (SELECT id, {select} AS score FROM {_TABLE} WHERE {where}) "
            f"ORDER BY score DESC, id LIMIT ?"
        )
        try:
            rows = conn.execute(sql, [*params, k]).fetchall()
        except self._duckdb.Error as exc:
            raise EngineError(f"duckdb engine failed on query {query.id!r}: {exc}") from exc
        return [Hit(doc_id=str(d), score=float(s)) for d, s in rows]

    def _term_condition(self, term: str) -> tuple[str, list[Any]]:
        """Whether a boolean clause term matches: one word by the index, more as a phrase."""
        if len(words(term)) == 1:
            s, p = self._bm25(term, None)
            return f"(({s}) IS NOT NULL)", p
        _, _, cond, p = self._phrase(term, [], 0)
        return f"({cond})", p

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._closed = True


def _literal(value: str) -> str:
    """A SQL string literal (single quotes doubled)."""
    return "'" + value.replace("'", "''") + "'"


def _batches(docs: Iterable[Document], size: int) -> Iterator[list[Document]]:
    batch: list[Document] = []
    for d in docs:
        batch.append(d)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _phrase_udf(tokens: list[str] | None, phrase: list[str] | None, slop: int | None) -> bool:
    if not tokens or not phrase:
        return False
    return phrase_matches(tokens, phrase, int(slop or 0))
