"""PostgreSQL native full-text search (tsvector / tsquery, ranked by ``ts_rank_cd``).

The engine talks to a server given by a DSN (psycopg 3, installed by ``rankscope[pg]``). By
default it creates and fills its own table: ``id``, ``title``, ``text``, the other fields in a
JSONB column ``extra``, one generated ``tsvector`` per field (``tsv_title``, ``tsv_text``,
``tsv_<field>``) and a generated combined ``tsv`` where each field carries its weight label
(``setweight``; title ``A``, text ``D``, other fields ``C`` unless ``weights`` says otherwise),
all GIN-indexed, filled with ``COPY``. The table name defaults to ``rankscope_docs_<hash>``, the
hash covering the settings and every document, so indexing the same corpus again reuses the
table instead of reloading it, as long as the table is kept: a content-named table is dropped
when the engine closes unless ``drop_on_close=False``; a table named by ``table`` is kept unless
``drop_on_close=True``.

With ``create=False`` it searches a table that already exists; ``columns`` maps the field names
(``id``, ``title``, ``text``, others) to its columns, and ``tsvector_column`` may name a
precomputed combined ``tsvector`` column (otherwise vectors are computed per query, unindexed).

Translation (user text always travels as a bound parameter; no user text is formatted into SQL):

- ``query_string``: ``websearch_to_tsquery`` over the combined vector. With ``operator="or"``
  (the default, as the other engines do for free text) the text is cut into websearch units
  (words, ``"quoted phrases"``, ``-negations``), each distinct unit goes through
  ``websearch_to_tsquery`` once and the positive units are OR-ed (``||``) with the negations
  AND-ed (``&& !!``); ``ts_rank_cd`` counts a repeated lexeme once either way, and a unit per
  occurrence made a long query take minutes;
  ``operator="and"`` hands the whole text to ``websearch_to_tsquery`` (PostgreSQL's own AND
  semantics).
- ``match``: each distinct whitespace-separated chunk through ``plainto_tsquery``, OR-ed (or
  AND-ed), against that field's vector.
- ``multi_match``: the same query against each listed field; a document matches when any field
  does and scores ``sum(boost_f * rank(tsv_f, q))`` (``multi_match="sum"``, Elasticsearch's
  ``most_fields``) or the maximum of those products (``multi_match="max"``, ``best_fields``).
- ``phrase``: ``phraseto_tsquery`` (stop words keep their position gaps). With ``slop > 0`` the
  phrase is analysed into lexemes with positions and the tsquery is built from them: an OR of
  chains ``'a' <d1> 'b' <d2> 'c'``: every placement of the lexemes that Lucene's sloppy-phrase
  rule allows within ``slop``, reorderings included (a transposition costs 2; PostgreSQL's
  ``<N>`` means exactly N apart, so slop is spelled out). Over all fields the combined vector is
  used, where the fields follow each other (a phrase may span the end of the title and the start
  of the text).
- ``boolean``: each term as a phrase; documents must match ``must1 & must2 & !(not1 | not2)``
  (or ``(should1 | should2) & !(...)`` when there is no ``must``) and are ranked by the OR of all
  positive terms, so ``should`` terms only raise the score, as in Lucene.

Ranking: ``ts_rank_cd`` (cover density; ``rank="ts_rank"`` for frequency ranking) with the
``normalization`` bit mask of PostgreSQL (default 0: no length normalisation) and, on the combined
vector, the label weights ``label_weights`` for D, C, B, A (PostgreSQL's default 0.1, 0.2, 0.4,
1.0). Ties are broken by document id so results are deterministic.

A query holds at most :data:`~rankscope.engines._text.MAX_QUERY_TERMS` distinct units (or phrase
words); past that it fails with a :class:`~rankscope.errors.QueryError`. A NUL character in query
text separates words, as it does for the other engines (PostgreSQL text cannot hold it).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from itertools import pairwise, product
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from rankscope.engines._pg import (
    PgConnection,
    import_psycopg,
    pg_error,
    quoted_table,
    redact_dsn,
    resolve_dsn,
    table_comment,
    table_identifier,
)
from rankscope.engines._text import boolean_clauses, check_phrase_length, term_counts, words
from rankscope.engines.base import Document, Engine, Hit, Query, QueryKind, register_engine
from rankscope.engines.stream import extra_fields, reiterable
from rankscope.errors import ConfigError, EngineError, QueryError

if TYPE_CHECKING:
    import psycopg
    from psycopg import sql

# Imported where used, so that this module imports without them: psycopg (the pg extra).

LABELS = "ABCD"
DEFAULT_WEIGHTS: dict[str, str] = {"title": "A", "text": "D"}
EXTRA_FIELD_WEIGHT = "C"
#: the most distance chains one sloppy phrase may expand to
MAX_PHRASE_CHAINS = 512
#: the most distinct terms (after analysis) a query may hold: ts_rank_cd's time grows much
#: faster than its number of terms (``bench/long_queries.py --ts-rank-cd``: about 1 s at 256
#: terms over Cranfield, a minute at 1,024)
MAX_LEXEMES = 256
_SCHEMA_VERSION = "rankscope-postgres-1"
_WEBSEARCH_UNIT = re.compile(r'-?"[^"]*"?|[^\s"]+')


def tsquery_lexeme(lexeme: str) -> str:
    """A lexeme as a quoted tsquery operand: backslashes and quotes escaped."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def sloppy_phrase_tsquery(
    positions: Sequence[tuple[int, str]], slop: int, limit: int = MAX_PHRASE_CHAINS
) -> str:
    """The tsquery text for lexemes at ``positions`` (position, lexeme) within ``slop``, by
    Lucene's sloppy-phrase rule (see ``phrase.py``): each lexeme may move by ``d_i`` positions
    with ``max(d) - min(d) <= slop``, so terms may also change order (a transposition costs 2).

    PostgreSQL's ``a <N> b`` means b exactly N positions after a, so the rule is spelled out: an
    OR of chains ``'x' <n1> 'y' <n2> 'z'``, one per placement of the lexemes (at distinct
    positions) that the rule allows, in document order. Empty string for no lexeme.
    """
    seq = sorted(positions)
    if not seq:
        return ""
    if len(seq) == 1:
        return tsquery_lexeme(seq[0][1])
    n = len(seq)
    slop = max(0, int(slop))
    if (2 * slop + 1) ** (n - 1) > 64 * limit:  # placements tried: d_1 = 0, others -slop..slop
        raise EngineError(
            f"a phrase of {n} terms with slop {slop} expands to too many PostgreSQL distance "
            f"chains (limit {limit}); use a smaller slop or a shorter phrase"
        )
    lexemes = [tsquery_lexeme(lex) for _, lex in seq]
    chains: dict[str, None] = {}
    for rest in product(range(-slop, slop + 1), repeat=n - 1):
        offsets = (0, *rest)
        if max(offsets) - min(offsets) > slop:
            continue
        placed = sorted(
            (q + d, q, i) for i, ((q, _), d) in enumerate(zip(seq, offsets, strict=True))
        )
        if any(a[0] == b[0] and a[1] != b[1] for a, b in pairwise(placed)):
            continue  # two different phrase terms cannot share a position
        parts = [lexemes[placed[0][2]]]
        for prev, cur in pairwise(placed):
            parts.append(f"<{cur[0] - prev[0]}> {lexemes[cur[2]]}")
        chains.setdefault(" ".join(parts), None)
        if len(chains) > limit:
            raise EngineError(
                f"a phrase of {n} terms with slop {slop} expands to more than {limit} "
                f"PostgreSQL distance chains; use a smaller slop or a shorter phrase"
            )
    found = list(chains)
    return "(" + " | ".join(f"({c})" for c in found) + ")" if len(found) > 1 else found[0]


def websearch_units(text: str) -> tuple[list[str], list[str]]:
    """Positive and negated units of websearch-syntax text (``or`` keywords dropped)."""
    positive: list[str] = []
    negative: list[str] = []
    for unit in _WEBSEARCH_UNIT.findall(text):
        if unit.lower() == "or":
            continue
        if unit.startswith("-") and len(unit) > 1:
            negative.append(unit[1:])
        elif unit != "-":
            positive.append(unit)
    return positive, negative


class _Expr:
    """A piece of SQL with its bound parameters, in order."""

    def __init__(self, text: sql.Composable, params: Sequence[Any] = ()) -> None:
        self.sql = text
        self.params = list(params)


@register_engine("postgres")
class PostgresEngine(PgConnection, Engine):
    """PostgreSQL full-text search. See the module docstring for options and translation.

    Options: ``dsn`` (libpq key/value string or URL; default ``$RANKSCOPE_PG_DSN``), ``table``,
    ``create`` (default True), ``config`` (text search configuration, default ``english``),
    ``weights`` (field -> label A..D), ``label_weights`` (D, C, B, A floats), ``rank``
    (``ts_rank_cd`` or ``ts_rank``), ``normalization`` (int bit mask), ``operator`` (``or`` or
    ``and``), ``multi_match`` (``sum`` or ``max``), ``columns`` and ``tsvector_column`` (existing
    tables), ``reuse`` (reuse a table already filled with the same documents), ``drop_on_close``,
    ``return_text`` (fill :attr:`Hit.text`), ``connect_timeout`` (seconds).
    """

    name = "postgres"
    supported_kinds: ClassVar[frozenset[QueryKind]] = frozenset(
        {"query_string", "match", "multi_match", "phrase", "boolean"}
    )

    def __init__(
        self,
        dsn: str | None = None,
        *,
        table: str | None = None,
        create: bool = True,
        config: str = "english",
        weights: Mapping[str, str] | None = None,
        label_weights: Sequence[float] = (0.1, 0.2, 0.4, 1.0),
        rank: Literal["ts_rank_cd", "ts_rank"] = "ts_rank_cd",
        normalization: int = 0,
        operator: Literal["or", "and"] = "or",
        multi_match: Literal["sum", "max"] = "sum",
        columns: Mapping[str, str] | None = None,
        tsvector_column: str | None = None,
        reuse: bool = True,
        drop_on_close: bool | None = None,
        return_text: bool = False,
        connect_timeout: float = 5.0,
    ) -> None:
        self.dsn = resolve_dsn(dsn, self.name)
        if not isinstance(config, str) or not config:
            raise ConfigError(
                "postgres engine option 'config' must name a text search configuration",
                value=config,
                hint="e.g. 'english' or 'simple'",
            )
        self.config = config
        self.weights = dict(DEFAULT_WEIGHTS)
        for field, label in (weights or {}).items():
            if not isinstance(label, str) or label.upper() not in LABELS:
                raise ConfigError(
                    f"postgres engine option 'weights': field {field!r} has weight label {label!r}",
                    hint="use one of the labels A, B, C, D (A counts most)",
                )
            self.weights[field] = label.upper()
        lw = [float(w) for w in label_weights]
        if len(lw) != 4 or any(not (0.0 <= w <= 1.0) for w in lw):
            raise ConfigError(
                "postgres engine option 'label_weights' needs four numbers in [0, 1] for the "
                "labels D, C, B, A",
                value=list(label_weights),
            )
        self.label_weights = lw
        if rank not in ("ts_rank_cd", "ts_rank"):
            raise ConfigError(
                "postgres engine option 'rank' is unknown",
                value=rank,
                hint="use 'ts_rank_cd' or 'ts_rank'",
            )
        self.rank = rank
        if not isinstance(normalization, int) or not 0 <= normalization <= 63:
            raise ConfigError(
                "postgres engine option 'normalization' must be PostgreSQL's ranking bit mask "
                "(0..63)",
                value=normalization,
                hint="0 ignores length, 1 divides by 1 + log(length), 32 maps to rank/(rank+1)",
            )
        self.normalization = normalization
        if operator not in ("or", "and"):
            raise ConfigError(
                "postgres engine option 'operator' is unknown",
                value=operator,
                hint="use 'or' or 'and'",
            )
        self.operator = operator
        if multi_match not in ("sum", "max"):
            raise ConfigError(
                "postgres engine option 'multi_match' is unknown",
                value=multi_match,
                hint="use 'sum' or 'max'",
            )
        self.multi_match = multi_match
        self.create = bool(create)
        if not self.create and not table:
            raise ConfigError(
                "postgres engine with create=False needs option 'table' (the existing table "
                "to search)"
            )
        self._table_name = table
        # an unnamed table is named after its content, again at each index()
        self._auto_table = table is None
        if table:
            table_identifier(table)
        self.columns = dict(columns or {})
        self.tsvector_column = tsvector_column
        if self.create and (self.columns or tsvector_column):
            raise ConfigError(
                "postgres engine options 'columns' and 'tsvector_column' describe an existing "
                "table; set create=False to use them"
            )
        self.reuse = bool(reuse)
        # a table named after its content that this engine filled is dropped on close unless
        # asked to keep it (drop_on_close=False) for later runs to reuse; one it found already
        # filled belongs to whoever filled it, and a table the user named is kept
        self.drop_on_close = drop_on_close
        self._filled_table = False
        self.return_text = bool(return_text)
        self.connect_timeout = float(connect_timeout)
        self._conn: psycopg.Connection[Any] | None = None
        # field name -> SQL giving its (unweighted) tsvector; "" -> the combined weighted one
        self._fields: dict[str, sql.Composable] | None = None
        self._id_col: sql.Composable | None = None
        self._text_col: sql.Composable | None = None
        self._closed = False

    # -- connection ---------------------------------------------------------------------------

    def _setup(self, conn: psycopg.Connection[Any]) -> None:
        """The text search configuration must exist on the server."""
        pg = import_psycopg()
        try:
            conn.execute("SELECT %s::regconfig", [self.config])
        except pg.Error as exc:
            known = [r[0] for r in conn.execute("SELECT cfgname FROM pg_ts_config ORDER BY 1")]
            raise ConfigError(
                f"postgres engine option 'config': text search configuration {self.config!r} "
                f"does not exist on the server",
                hint=f"known configurations: {', '.join(known)}",
            ) from exc

    # -- indexing -----------------------------------------------------------------------------

    def index(self, docs: Iterable[Document]) -> None:
        if not self.create:
            raise EngineError(
                f"postgres engine was set up to search the existing table {self._table_name!r} "
                f"(create=False); it does not index. Use create=True to index documents"
            )
        from psycopg import sql

        pg = import_psycopg()
        # read twice, to check and hash, then to COPY: a streamed corpus is not held
        docs = reiterable(docs)
        extra = extra_fields(docs)
        digest = self._digest(docs, extra)
        if self._auto_table or self._table_name is None:
            self._table_name = f"rankscope_docs_{digest[:16]}"
        table = table_identifier(self._table_name)
        conn = self._connect()
        self._set_created_layout(extra)
        try:
            if self.reuse and table_comment(conn, self._table_name) == digest:
                return
            self._filled_table = True
            with conn.transaction():
                conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(table))
                conn.execute(self._create_table_sql(table, extra))
                with conn.cursor() as cur:
                    copy_sql = sql.SQL("COPY {} (id, title, text, extra) FROM STDIN").format(table)
                    with cur.copy(copy_sql) as copy:
                        for d in docs:
                            extras = {f: d.fields[f] for f in extra if f in d.fields}
                            copy.write_row((d.id, d.title, d.text, json.dumps(extras)))
                for col in ("tsv", *(f"tsv_{f}" for f in ("title", "text", *extra))):
                    conn.execute(
                        sql.SQL("CREATE INDEX ON {} USING gin ({})").format(
                            table, sql.Identifier(col)
                        )
                    )
                conn.execute(
                    sql.SQL("COMMENT ON TABLE {} IS {}").format(table, sql.Literal(digest))
                )
            conn.execute(sql.SQL("ANALYZE {}").format(table))
        except pg.Error as exc:
            raise pg_error(self.name, f"indexing into table {self._table_name!r}", exc) from exc

    def _digest(self, docs: Iterable[Document], extra: Sequence[str]) -> str:
        """The hash of the settings and documents, checking each document on the way."""
        h = hashlib.sha256()
        settings = [_SCHEMA_VERSION, self.config, sorted(self._all_weights(extra).items())]
        h.update(json.dumps(settings).encode())
        seen: set[str] = set()
        for d in docs:
            _check_document(d, seen)
            row = [d.id, d.title, d.text, sorted(d.fields.items())]
            h.update(json.dumps(row, ensure_ascii=False).encode())
            h.update(b"\n")
        return h.hexdigest()

    def _all_weights(self, extra: Sequence[str]) -> dict[str, str]:
        return {f: self.weights.get(f, EXTRA_FIELD_WEIGHT) for f in ("title", "text", *extra)}

    def _field_source(self, field: str) -> sql.Composable:
        from psycopg import sql

        if field in ("title", "text"):
            return sql.Identifier(field)
        return sql.SQL("coalesce(extra ->> {}, '')").format(sql.Literal(field))

    def _create_table_sql(self, table: sql.Identifier, extra: Sequence[str]) -> sql.Composed:
        from psycopg import sql

        cfg = sql.SQL("{}::regconfig").format(sql.Literal(self.config))
        cols: list[sql.Composable] = [
            sql.SQL("id text PRIMARY KEY"),
            sql.SQL("title text NOT NULL"),
            sql.SQL("text text NOT NULL"),
            sql.SQL("extra jsonb NOT NULL"),
        ]
        weighted: list[sql.Composable] = []
        for field, label in self._all_weights(extra).items():
            vec = sql.SQL("to_tsvector({}, {})").format(cfg, self._field_source(field))
            cols.append(
                sql.SQL("{} tsvector GENERATED ALWAYS AS ({}) STORED").format(
                    sql.Identifier(f"tsv_{field}"), vec
                )
            )
            weighted.append(sql.SQL("setweight({}, {})").format(vec, sql.Literal(label)))
        cols.append(
            sql.SQL("tsv tsvector GENERATED ALWAYS AS ({}) STORED").format(
                sql.SQL(" || ").join(weighted)
            )
        )
        return sql.SQL("CREATE TABLE {} ({})").format(table, sql.SQL(", ").join(cols))

    def _set_created_layout(self, extra: Sequence[str]) -> None:
        from psycopg import sql

        fields: dict[str, sql.Composable] = {"": sql.SQL("d.tsv")}
        for f in ("title", "text", *extra):
            fields[f] = sql.SQL("d.{}").format(sql.Identifier(f"tsv_{f}"))
        self._fields = fields
        self._id_col = sql.SQL("d.id")
        self._text_col = sql.SQL("d.text")

    def _load_layout(self) -> None:
        """Find the searchable fields of a table this engine did not index in this session."""
        conn = self._connect()
        assert self._table_name is not None
        rows = conn.execute(
            "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attnum > 0 "
            "AND NOT attisdropped ORDER BY attnum",
            [quoted_table(self._table_name)],
        ).fetchall()
        names = [r[0] for r in rows]
        if not names:
            raise EngineError(
                f"postgres engine: table {self._table_name!r} does not exist at "
                f"{redact_dsn(self.dsn)!r}; call index() first or name an existing table"
            )
        if self.create:
            extra = [n[4:] for n in names if n.startswith("tsv_") and n[4:] not in DEFAULT_WEIGHTS]
            if "tsv" not in names or "id" not in names:
                raise EngineError(
                    f"postgres engine: table {self._table_name!r} was not made by this engine "
                    f"(no id/tsv columns); use create=False with 'columns' to search it"
                )
            self._set_created_layout(extra)
            return
        self._set_existing_layout(names)

    def _set_existing_layout(self, names: Sequence[str]) -> None:
        from psycopg import sql

        mapping = {"id": "id", **self.columns}
        if "title" not in self.columns and "title" in names:
            mapping["title"] = "title"
        if "text" not in self.columns and "text" in names:
            mapping["text"] = "text"
        missing = [c for c in mapping.values() if c not in names]
        if self.tsvector_column and self.tsvector_column not in names:
            missing.append(self.tsvector_column)
        if missing:
            raise ConfigError(
                f"postgres engine: table {self._table_name!r} has no column(s) "
                f"{', '.join(missing)}",
                hint=f"its columns are: {', '.join(names)}; fix the 'columns' option",
            )
        searchable = {f: c for f, c in mapping.items() if f != "id"}
        if not searchable:
            raise ConfigError(
                f"postgres engine: no text column to search in table {self._table_name!r}",
                hint="map at least one field to a column, e.g. columns={'text': 'body'}",
            )
        cfg = sql.SQL("{}::regconfig").format(sql.Literal(self.config))
        fields: dict[str, sql.Composable] = {}
        weighted = []
        for f, col in searchable.items():
            vec = sql.SQL("to_tsvector({}, coalesce(d.{}::text, ''))").format(
                cfg, sql.Identifier(col)
            )
            fields[f] = vec
            label = self.weights.get(f, EXTRA_FIELD_WEIGHT)
            weighted.append(sql.SQL("setweight({}, {})").format(vec, sql.Literal(label)))
        if self.tsvector_column:
            fields[""] = sql.SQL("d.{}").format(sql.Identifier(self.tsvector_column))
        else:
            fields[""] = sql.SQL("({})").format(sql.SQL(" || ").join(weighted))
        self._fields = fields
        self._id_col = sql.SQL("d.{}::text").format(sql.Identifier(mapping["id"]))
        text_col = mapping.get("text")
        self._text_col = (
            sql.SQL("d.{}::text").format(sql.Identifier(text_col)) if text_col else sql.SQL("NULL")
        )

    # -- query translation --------------------------------------------------------------------

    def _vector(self, query: Query, field: str | None) -> sql.Composable:
        assert self._fields is not None
        key = field or ""
        if key in ("", "all", "_all", "*"):
            return self._fields[""]
        try:
            return self._fields[key]
        except KeyError:
            known = ", ".join(f for f in self._fields if f)
            raise EngineError(
                f"query {query.id!r} names field {field!r}, which the postgres table "
                f"{self._table_name!r} does not index; indexed fields: {known}"
            ) from None

    def _calls(self, function: str, texts: Sequence[str], join: str) -> _Expr:
        """``function(config, text)`` for each text, joined by a tsquery operator.

        The configuration is a literal (checked against the server at connect): a constant
        regconfig lets the planner fold the whole tsquery once instead of once per row.
        """
        from psycopg import sql

        part = sql.SQL("{}({}::regconfig, %s)").format(
            sql.Identifier(function), sql.Literal(self.config)
        )
        joined = sql.SQL(join).join([part] * len(texts))
        return _Expr(sql.SQL("({})").format(joined), list(texts))

    def _units_query(
        self,
        query: Query,
        function: str,
        positive: Sequence[str],
        negative: Sequence[str],
        join: Literal["|", "&"],
    ) -> _Expr | None:
        """The positive units through ``function`` (e.g. ``plainto_tsquery``), OR-ed (or
        AND-ed), with the negated units AND-NOT-ed; None when no positive unit has a lexeme.

        Each unit is analysed by the server first (one round trip) and a tsquery it gives twice
        ("Flow", "flow," and "flow" all give ``'flow'``) is used once: ``ts_rank_cd`` ranks the
        same either way, but its time grows with every operand. More than
        :data:`MAX_LEXEMES` distinct operands fail the query (:class:`QueryError`).
        """
        from psycopg import sql

        pos_units, neg_units = list(dict.fromkeys(positive)), list(dict.fromkeys(negative))
        term_counts([*pos_units, *neg_units], query, self.name)  # bounds the round trip
        stmt = sql.SQL(
            "SELECT {}({}::regconfig, u)::text FROM unnest(%s::text[]) WITH ORDINALITY AS "
            "x(u, o) ORDER BY o"
        ).format(sql.Identifier(function), sql.Literal(self.config))
        rows = self._connect().execute(stmt, [[*pos_units, *neg_units]]).fetchall()
        parts = [str(r[0]) for r in rows]
        pos = [p for p in dict.fromkeys(parts[: len(pos_units)]) if p]
        neg = [p for p in dict.fromkeys(parts[len(pos_units) :]) if p]
        if len(pos) + len(neg) > MAX_LEXEMES:
            raise QueryError(
                f"query {query.id!r} has {len(pos) + len(neg)} distinct terms after analysis; "
                f"the postgres engine takes at most {MAX_LEXEMES} (ts_rank_cd's time grows "
                f"much faster than the number of terms). Shorten it"
            )
        if not pos:
            return None
        text = f" {join} ".join(f"( {p} )" for p in pos)
        if neg:
            text = f"( {text} ) & !( {' | '.join(f'( {p} )' for p in neg)} )"
        return _Expr(sql.SQL("%s::tsquery"), [text])

    def _words_query(self, query: Query, text: str) -> _Expr | None:
        """Each whitespace-separated chunk through plainto_tsquery, OR-ed (or AND-ed).

        Chunks rather than :func:`words`: PostgreSQL's parser knows tokens such as file paths,
        URLs and hyphenated words, and the documents were parsed by it too.
        """
        if not words(text):
            return None
        join: Literal["|", "&"] = "|" if self.operator == "or" else "&"
        return self._units_query(query, "plainto_tsquery", text.split(), [], join)

    def _websearch_query(self, query: Query, text: str) -> _Expr | None:
        positive, negative = websearch_units(text)
        if self.operator == "and" and any(u.lower() == "or" for u in _WEBSEARCH_UNIT.findall(text)):
            # an `or` groups its neighbours: PostgreSQL reads the whole text
            term_counts(words(text), query, self.name)
            return self._calls("websearch_to_tsquery", [text], "")
        if not positive:
            return None
        join: Literal["|", "&"] = "|" if self.operator == "or" else "&"
        return self._units_query(query, "websearch_to_tsquery", positive, negative, join)

    def _phrase_query(self, query: Query, text: str, slop: int) -> _Expr | None:
        from psycopg import sql

        if not words(text):
            return None
        check_phrase_length(words(text), query)
        if slop <= 0:
            return self._calls("phraseto_tsquery", [text], "")
        conn = self._connect()
        rows = conn.execute(
            "SELECT p, u.lexeme FROM unnest(to_tsvector(%s::regconfig, %s)) AS u, "
            "unnest(u.positions) AS p",
            [self.config, text],
        ).fetchall()
        built = sloppy_phrase_tsquery([(int(p), str(lex)) for p, lex in rows], slop)
        if not built:
            return None
        return _Expr(sql.SQL("%s::tsquery"), [built])

    def _terms_query(self, terms: Sequence[str], join: str) -> _Expr:
        return self._calls("phraseto_tsquery", terms, join)

    def translate(self, query: Query) -> tuple[_Expr, _Expr, list[tuple[str | None, float]]] | None:
        """(filter tsquery, ranking tsquery, [(field, boost)]) or None when nothing can match."""
        from psycopg import sql

        kind = query.kind
        if kind == "boolean":
            must, should, must_not = boolean_clauses(query)
            if len(must) + len(should) + len(must_not) > MAX_LEXEMES:
                raise QueryError(
                    f"boolean query {query.id!r} has more than {MAX_LEXEMES} terms, the most "
                    f"the postgres engine takes; shorten it"
                )
            base = self._terms_query(must, " && ") if must else self._terms_query(should, " || ")
            filt = base
            if must_not:
                nots = self._terms_query(must_not, " || ")
                filt = _Expr(
                    sql.SQL("({} && !!{})").format(base.sql, nots.sql), base.params + nots.params
                )
            return filt, self._terms_query(must + should, " || "), [(query.field, 1.0)]
        q: _Expr | None
        targets: list[tuple[str | None, float]]
        if kind == "query_string":
            q, targets = self._websearch_query(query, query.text), [(query.field, 1.0)]
        elif kind == "match":
            if not query.field:
                raise EngineError(
                    f"match query {query.id!r} names no field; set 'field' (e.g. title or "
                    f"text) or use a query_string query to search all fields"
                )
            q, targets = self._words_query(query, query.text), [(query.field, 1.0)]
        elif kind == "multi_match":
            if not query.fields:
                raise EngineError(
                    f"multi_match query {query.id!r} lists no fields; give (field, boost) pairs"
                )
            q, targets = (
                self._words_query(query, query.text),
                [(f, float(b)) for f, b in query.fields],
            )
        else:  # phrase
            q, targets = (
                self._phrase_query(query, query.text, int(query.slop)),
                [(query.field, 1.0)],
            )
        if q is None:
            return None
        return q, q, targets

    def _rank_call(self, vector: sql.Composable, weighted: bool) -> _Expr:
        from psycopg import sql

        fn = sql.Identifier(self.rank)
        if weighted:
            return _Expr(
                sql.SQL("{}(%s::float4[], {}, p.rq, %s)").format(fn, vector),
                [self.label_weights, self.normalization],
            )
        return _Expr(sql.SQL("{}({}, p.rq, %s)").format(fn, vector), [self.normalization])

    # -- searching ----------------------------------------------------------------------------

    def _search(self, query: Query, k: int) -> list[Hit]:
        from psycopg import sql

        pg = import_psycopg()
        conn = self._connect()
        if self._fields is None:
            if self._table_name is None:
                raise EngineError("postgres engine has no table yet; call index() first")
            try:
                self._load_layout()
            except pg.Error as exc:
                raise pg_error(self.name, f"reading table {self._table_name!r}", exc) from exc
        assert self._id_col is not None and self._text_col is not None
        try:
            translated = self.translate(without_nul(query))
        except pg.Error as exc:
            raise _search_error(query, exc) from exc
        if translated is None:
            return []
        filt, rankq, targets = translated
        vectors = [(self._vector(query, f), boost) for f, boost in targets]
        matches = sql.SQL(" OR ").join(sql.SQL("{} @@ p.q").format(v) for v, _ in vectors)
        params: list[Any] = []
        if len(vectors) == 1:
            call = self._rank_call(vectors[0][0], weighted=targets[0][0] in (None, ""))
            score, params = call.sql, call.params
        else:
            terms = []
            for v, boost in vectors:
                call = self._rank_call(v, weighted=False)
                terms.append(sql.SQL("%s * {}").format(call.sql))
                params += [boost, *call.params]
            combine = "(" if self.multi_match == "sum" else "greatest("
            sep = " + " if self.multi_match == "sum" else ", "
            score = sql.SQL(combine) + sql.SQL(sep).join(terms) + sql.SQL(")")
        text_col = self._text_col if self.return_text else sql.SQL("NULL")
        stmt = sql.SQL(
            "SELECT {id} AS doc_id, {score}::float8 AS score, {text} AS doc_text "
            "FROM {table} AS d, (SELECT {q}::tsquery AS q, {rq}::tsquery AS rq) AS p "
            "WHERE {matches} ORDER BY score DESC, doc_id ASC LIMIT %s"
        ).format(
            id=self._id_col,
            score=score,
            text=text_col,
            table=table_identifier(self._table_name or ""),
            q=filt.sql,
            rq=rankq.sql,
            matches=matches,
        )
        # placeholders in statement order: score, then the query subselect, then LIMIT
        all_params = [*params, *filt.params, *rankq.params, k]
        try:
            rows = conn.execute(stmt, all_params).fetchall()
        except pg.Error as exc:
            raise _search_error(query, exc) from exc
        return [
            Hit(doc_id=str(d), score=float(s), text=None if t is None else str(t))
            for d, s, t in rows
        ]

    def _table_to_drop(self) -> str | None:
        return super()._table_to_drop() if self.create else None


def _search_error(query: Query, exc: Exception) -> EngineError:
    """A server error while searching: a :class:`QueryError` when the query's data is at fault
    (PostgreSQL's data-exception and program-limit classes, 22 and 54), so that only this query
    fails; any other error is the engine's."""
    error = pg_error("postgres", f"searching query {query.id!r}", exc)
    state = getattr(exc, "sqlstate", None) or ""
    if state.startswith(("22", "54")):
        return QueryError(str(error))
    return error


def without_nul(query: Query) -> Query:
    """``query`` with each NUL character of its text and terms made a space: PostgreSQL text
    cannot hold one, and every engine splits words at it."""

    def clean(text: str) -> str:
        return text.replace("\x00", " ")

    if "\x00" not in query.text + "".join((*query.must, *query.should, *query.must_not)):
        return query
    return replace(
        query,
        text=clean(query.text),
        must=tuple(map(clean, query.must)),
        should=tuple(map(clean, query.should)),
        must_not=tuple(map(clean, query.must_not)),
    )


def _check_document(d: Document, seen: set[str]) -> None:
    """Refuses a duplicate id (``seen`` holds the ids so far), NUL characters and field names
    too long for a column."""
    if d.id in seen:
        raise EngineError(f"postgres engine: duplicate document id {d.id!r}; ids must be unique")
    seen.add(d.id)
    for name, value in (("id", d.id), ("title", d.title), ("text", d.text), *d.fields.items()):
        if "\x00" in value:
            raise EngineError(
                f"postgres engine: document {d.id!r} field {name!r} contains a NUL character, "
                f"which PostgreSQL text cannot hold; remove it before indexing"
            )
    for f in d.fields:
        if f not in ("title", "text") and len(f"tsv_{f}".encode()) > 63:
            raise EngineError(
                f"postgres engine: field name {f!r} (document {d.id!r}) is too long for "
                f"a PostgreSQL column; use at most 59 bytes"
            )
