"""Dense retrieval inside PostgreSQL with the pgvector extension.

Documents are embedded by a rankscope embedder (:mod:`rankscope.engines.embeddings`; default the
offline all-MiniLM-L6-v2, ``model="hashing:512"`` for a model-free one) from their ``title`` and
``text`` (option ``embed_fields``), stored in a table ``(id text, title text, text text,
embedding vector(dim))`` filled with ``COPY``, and searched by cosine distance ``<=>``; a hit's
score is the cosine similarity ``1 - distance``. An HNSW index (``vector_cosine_ops``) is built
and searches go through it (approximate nearest neighbours) unless ``exact=True`` (or
``hnsw=False``): then no index is built and every search scans the table exactly. Through the
index, ``ef_search`` is raised to ``k`` for each search so that it can return k rows, and the
planner is kept off the sequential scan, which it picks from some ``k`` on (100 on a few
thousand rows): its rankings were then exact, the index built for nothing. pgvector caps
``ef_search`` at 1000, so deeper searches scan exactly. Which way each search went is read from
its query plan (``EXPLAIN``, once per ``k``) and counted in :meth:`PgVectorEngine.search_stats`
(``approximate_searches``, ``exact_searches``), so results say whether rankings were
approximate.

Only ``query_string`` queries are answered: a dense model has no fields, phrases or operators, so
the other kinds are refused rather than approximated. Documents whose text embeds to the zero
vector (no word at all) get no vector and are never returned; their cosine is undefined.

The table name defaults to ``rankscope_vec_<hash>`` over the model id and the documents, so
indexing the same corpus with the same model again reuses the stored vectors, as long as the
table is kept: a content-named table is dropped when the engine closes unless
``drop_on_close=False``; a table named by ``table`` is kept unless ``drop_on_close=True``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np
import numpy.typing as npt

from rankscope.engines._pg import (
    PgConnection,
    import_psycopg,
    pg_error,
    quoted_table,
    resolve_dsn,
    table_comment,
    table_identifier,
)
from rankscope.engines.base import Document, Engine, Hit, Query, QueryKind, register_engine
from rankscope.engines.embeddings import embedding_stats, make_embedder, stats_since
from rankscope.engines.stream import reiterable
from rankscope.errors import ConfigError, EngineError

if TYPE_CHECKING:
    import psycopg
    from psycopg import sql

# Imported where used, so that this module imports without them: psycopg (the pg extra).

_SCHEMA_VERSION = "rankscope-pgvector-1"
#: pgvector's limit on hnsw.ef_search
MAX_EF_SEARCH = 1000
#: pgvector's limit on dimensions an HNSW index over ``vector`` can hold
MAX_HNSW_DIM = 2000


class TextEmbedder(Protocol):
    """What the engine needs from an embedder (:class:`rankscope.engines.embeddings.Embedder`)."""

    model_id: str

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...


def vector_literal(row: npt.NDArray[np.floating[Any]]) -> str:
    """pgvector's text form ``[x1,x2,...]`` (shortest round-trip float32 digits)."""
    return "[" + ",".join(repr(float(x)) for x in row.astype(np.float32)) + "]"


@register_engine("pgvector")
class PgVectorEngine(PgConnection, Engine):
    """Cosine-similarity search over embeddings stored in PostgreSQL (pgvector).

    Options: ``dsn`` (default ``$RANKSCOPE_PG_DSN``), ``model`` (embedder name for
    :func:`rankscope.engines.embeddings.make_embedder`; None: the default model) or ``embedder`` (an
    embedder object), ``cache`` (embedding cache on disk, default True), ``table``,
    ``embed_fields`` (default title and text), ``exact`` (default False: search through an HNSW
    index; True: no index, exact scans), ``hnsw`` (build the index; default ``not exact``),
    ``m`` and ``ef_construction`` (HNSW build parameters, pgvector defaults 16 and 64),
    ``ef_search`` (default 40, raised to k), ``reuse``, ``drop_on_close``, ``return_text``,
    ``batch_size`` (texts embedded at a time), ``connect_timeout`` (seconds), ``backend``
    (embedding backend: ``auto``, ``onnx`` or ``torch``, as for the vector engine).
    """

    name = "pgvector"
    supported_kinds: ClassVar[frozenset[QueryKind]] = frozenset({"query_string"})
    embeds_text = True

    def __init__(
        self,
        dsn: str | None = None,
        *,
        model: str | None = None,
        embedder: TextEmbedder | None = None,
        cache: bool = True,
        table: str | None = None,
        embed_fields: Sequence[str] = ("title", "text"),
        exact: bool = False,
        hnsw: bool | None = None,
        m: int = 16,
        ef_construction: int = 64,
        ef_search: int = 40,
        reuse: bool = True,
        drop_on_close: bool | None = None,
        return_text: bool = False,
        batch_size: int = 256,
        connect_timeout: float = 5.0,
        backend: str = "auto",
    ) -> None:
        self.dsn = resolve_dsn(dsn, self.name)
        if embedder is not None and model is not None:
            raise ConfigError(
                "pgvector engine takes either 'model' (a name) or 'embedder' (an object), not both",
                value=model,
            )
        if embedder is None:
            embedder = make_embedder(model, cache=cache, backend=backend)
        self.embedder: TextEmbedder = embedder
        if isinstance(embed_fields, str) or not embed_fields:
            raise ConfigError(
                "pgvector engine option 'embed_fields' must be a non-empty list of field names",
                value=embed_fields,
                hint="e.g. embed_fields: [title, text]",
            )
        self.embed_fields = tuple(embed_fields)
        for opt, value, low, high in (
            ("m", m, 2, 100),
            ("ef_construction", ef_construction, 4, 1000),
            ("ef_search", ef_search, 1, MAX_EF_SEARCH),
            ("batch_size", batch_size, 1, 1_000_000),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ConfigError(
                    f"pgvector engine option {opt!r} must be an integer in [{low}, {high}]",
                    value=value,
                )
        if ef_construction < 2 * m:
            raise ConfigError(
                "pgvector engine option 'ef_construction' must be at least 2 * m (pgvector's rule)",
                value=ef_construction,
            )
        if exact and hnsw:
            raise ConfigError(
                "pgvector engine options 'exact: true' and 'hnsw: true' contradict each other: "
                "an exact search uses no index",
                hint="drop 'hnsw' (exact search builds no index) or 'exact'",
            )
        self.exact = bool(exact)
        self.hnsw = not self.exact if hnsw is None else bool(hnsw)
        self.m = m
        self.ef_construction = ef_construction
        self.ef_search = ef_search
        self._table_name = table
        # an unnamed table is named after its content, again at each index()
        self._auto_table = table is None
        if table:
            table_identifier(table)
        self.reuse = bool(reuse)
        # a table named after its content that this engine filled is dropped on close unless
        # asked to keep it (drop_on_close=False) for later runs to reuse; one it found already
        # filled belongs to whoever filled it, and a table the user named is kept
        self.drop_on_close = drop_on_close
        self._filled_table = False
        self.return_text = bool(return_text)
        self.batch_size = batch_size
        self.connect_timeout = float(connect_timeout)
        self._conn: psycopg.Connection[Any] | None = None
        self._indexed = False
        self._closed = False
        # whether the table has an HNSW index, and per k whether the plan goes through it
        self._has_index = False
        self._plans: dict[int, bool] = {}
        self._searches = {True: 0, False: 0}
        self._stats_at_index = embedding_stats(self.embedder)
        self._embedded_docs = 0
        self._table_reused = False

    def index_stats(self) -> Mapping[str, int | float]:
        """Embedding-cache hits and misses of the last :meth:`index` (``documents_embedded``
        for an embedder without a cache) and ``table_reused`` (1 when the stored vectors of an
        identical earlier index were kept and nothing was embedded)."""
        cached = embedding_stats(self.embedder)
        stats: dict[str, int | float] = (
            stats_since(cached, self._stats_at_index)
            if cached
            else {"documents_embedded": self._embedded_docs}
        )
        stats["table_reused"] = int(self._table_reused)
        return stats

    def search_stats(self) -> Mapping[str, int | float]:
        """How many searches since :meth:`index` went through the HNSW index
        (``approximate_searches``) or scanned the table exactly (``exact_searches``), as their
        query plans show."""
        return {
            "approximate_searches": self._searches[True],
            "exact_searches": self._searches[False],
        }

    def _setup(self, conn: psycopg.Connection[Any]) -> None:
        """The ``vector`` extension, created when the server has it but the database not yet."""
        pg = import_psycopg()
        row = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
        if row is not None:
            return
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except pg.Error as exc:
            conn.close()
            reason = " ".join(str(exc).split())
            raise EngineError(
                f"pgvector engine: the 'vector' extension is not available in this database "
                f"({reason}). Install pgvector on the server (Debian: scripts/install-system-deps "
                f"builds it; or the postgresql-<version>-pgvector package) and run CREATE "
                f"EXTENSION vector as a superuser"
            ) from exc

    def _doc_text(self, d: Document) -> str:
        return "\n".join(t for t in (d.get(f) for f in self.embed_fields) if t)

    def _embed(self, texts: Sequence[str], queries: bool) -> npt.NDArray[np.float32]:
        fn = self.embedder.embed_queries if queries else self.embedder.embed_documents
        try:
            out = np.asarray(fn(list(texts)), dtype=np.float32)
        except EngineError:
            raise
        except Exception as exc:  # embedders wrap many libraries; report which one failed
            raise EngineError(
                f"pgvector engine: embedder {self.embedder.model_id!r} failed: {exc}"
            ) from exc
        if out.ndim != 2 or out.shape[0] != len(texts):
            raise EngineError(
                f"pgvector engine: embedder {self.embedder.model_id!r} returned shape "
                f"{out.shape} for {len(texts)} texts; expected ({len(texts)}, dim)"
            )
        return out

    def index(self, docs: Iterable[Document]) -> None:
        from psycopg import sql

        pg = import_psycopg()
        self._stats_at_index = embedding_stats(self.embedder)
        self._embedded_docs = 0
        self._table_reused = False
        self._has_index = False
        self._plans = {}
        self._searches = {True: 0, False: 0}
        # read twice, to check and hash, then to embed and COPY: a streamed corpus is not held
        docs = reiterable(docs)
        digest = self._digest(docs)
        if self._auto_table or self._table_name is None:
            self._table_name = f"rankscope_vec_{digest[:16]}"
        table = table_identifier(self._table_name)
        conn = self._connect()
        try:
            if self.reuse and table_comment(conn, self._table_name) == digest:
                self._indexed = True
                self._table_reused = True
                self._has_index = self._hnsw_index(conn)
                return
            self._filled_table = True
            dim = 0
            with conn.transaction():
                conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(table))
                created = False
                read = iter(docs)
                while batch := list(islice(read, self.batch_size)):
                    vecs = self._embed([self._doc_text(d) for d in batch], queries=False)
                    self._embedded_docs += len(batch)
                    if not created:
                        dim = int(vecs.shape[1])
                        if dim < 1:
                            raise EngineError(
                                f"pgvector engine: embedder {self.embedder.model_id!r} gave "
                                f"vectors of dimension {dim}"
                            )
                        self._create(conn, table, dim)
                        created = True
                    self._copy(conn, table, batch, vecs)
                if not created:  # no documents: an empty table of an unknown dimension
                    conn.execute(
                        sql.SQL(
                            "CREATE TABLE {} (id text PRIMARY KEY, title text, text text, "
                            "embedding vector)"
                        ).format(table)
                    )
                elif self.hnsw and dim <= MAX_HNSW_DIM:
                    conn.execute(
                        sql.SQL(
                            "CREATE INDEX ON {} USING hnsw (embedding vector_cosine_ops) "
                            "WITH (m = {}, ef_construction = {})"
                        ).format(table, sql.Literal(self.m), sql.Literal(self.ef_construction))
                    )
                conn.execute(
                    sql.SQL("COMMENT ON TABLE {} IS {}").format(table, sql.Literal(digest))
                )
            conn.execute(sql.SQL("ANALYZE {}").format(table))
            self._has_index = self._hnsw_index(conn)
        except pg.Error as exc:
            raise pg_error(self.name, f"indexing into table {self._table_name!r}", exc) from exc
        self._indexed = True

    def _hnsw_index(self, conn: psycopg.Connection[Any]) -> bool:
        """Whether the table has an HNSW index (none when the dimension is over pgvector's
        limit, or for an empty corpus)."""
        assert self._table_name is not None
        row = conn.execute(
            "SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid = to_regclass(%s) "
            "AND a.amname = 'hnsw'",
            [quoted_table(self._table_name)],
        ).fetchone()
        return row is not None

    def _digest(self, docs: Iterable[Document]) -> str:
        """The hash of the settings and documents; refuses a duplicate id or a NUL character
        on the way."""
        h = hashlib.sha256()
        settings: list[Any] = [_SCHEMA_VERSION, self.embedder.model_id, list(self.embed_fields)]
        settings += [self.hnsw, self.m, self.ef_construction]
        h.update(json.dumps(settings).encode())
        seen: set[str] = set()
        for d in docs:
            if d.id in seen:
                raise EngineError(f"pgvector engine: duplicate document id {d.id!r}")
            seen.add(d.id)
            if "\x00" in d.id or "\x00" in d.title or "\x00" in d.text:
                raise EngineError(
                    f"pgvector engine: document {d.id!r} contains a NUL character, which "
                    f"PostgreSQL text cannot hold; remove it before indexing"
                )
            h.update(json.dumps([d.id, d.title, self._doc_text(d)], ensure_ascii=False).encode())
            h.update(b"\n")
        return h.hexdigest()

    def _create(self, conn: psycopg.Connection[Any], table: Any, dim: int) -> None:
        from psycopg import sql

        conn.execute(
            sql.SQL(
                "CREATE TABLE {} (id text PRIMARY KEY, title text NOT NULL, text text NOT NULL, "
                "embedding vector({}))"
            ).format(table, sql.Literal(dim))
        )

    def _copy(
        self,
        conn: psycopg.Connection[Any],
        table: Any,
        batch: Sequence[Document],
        vecs: npt.NDArray[np.float32],
    ) -> None:
        from psycopg import sql

        norms = np.linalg.norm(vecs, axis=1)
        with conn.cursor() as cur:
            stmt = sql.SQL("COPY {} (id, title, text, embedding) FROM STDIN").format(table)
            with cur.copy(stmt) as copy:
                for d, vec, norm in zip(batch, vecs, norms, strict=True):
                    literal = vector_literal(vec) if norm > 0 and np.isfinite(norm) else None
                    copy.write_row((d.id, d.title, d.text, literal))

    def _search(self, query: Query, k: int) -> list[Hit]:
        from psycopg import sql

        pg = import_psycopg()
        conn = self._connect()
        if self._table_name is None:
            raise EngineError("pgvector engine has no table yet; call index() first")
        if not query.text.strip():
            return []
        vec = self._embed([query.text], queries=True)[0]
        norm = float(np.linalg.norm(vec))
        if not norm > 0 or not np.isfinite(norm):
            return []  # no word the model knows: cosine is undefined, nothing can be ranked
        text_col = sql.SQL("text") if self.return_text else sql.SQL("NULL")
        stmt = sql.SQL(
            "SELECT id, 1 - (embedding <=> %(q)s::vector) AS score, {text} FROM {table} "
            "WHERE embedding IS NOT NULL ORDER BY embedding <=> %(q)s::vector LIMIT %(k)s"
        ).format(text=text_col, table=table_identifier(self._table_name))
        params = {"q": vector_literal(vec), "k": k}
        # pgvector caps ef_search: the index cannot return more rows than that
        through_index = self._has_index and not self.exact and k <= MAX_EF_SEARCH
        try:
            with conn.transaction():
                if through_index:
                    ef = sql.Literal(max(k, self.ef_search))
                    conn.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(ef))
                    # from some k on the planner prefers a sequential scan and a sort, which is
                    # exact and leaves the index unused
                    conn.execute("SET LOCAL enable_seqscan = off")
                else:
                    conn.execute("SET LOCAL enable_indexscan = off")
                if k not in self._plans:
                    self._plans[k] = self._plan_uses_index(conn, stmt, params)
                rows = conn.execute(stmt, params).fetchall()
        except pg.Error as exc:
            raise pg_error(self.name, f"searching query {query.id!r}", exc) from exc
        self._searches[self._plans[k]] += 1
        # ORDER BY distance alone lets the HNSW index serve the query; ties are put in id order
        # here so that results are deterministic
        hits = [
            Hit(doc_id=str(d), score=float(s), text=None if t is None else str(t))
            for d, s, t in rows
        ]
        hits.sort(key=lambda h: (-h.score, h.doc_id))
        return hits

    def _plan_uses_index(
        self, conn: psycopg.Connection[Any], stmt: sql.Composed, params: Mapping[str, Any]
    ) -> bool:
        """Whether the plan of ``stmt`` goes through the HNSW index (an approximate search)
        rather than scanning the table (exact): the only index that can order rows by distance
        is the HNSW one."""
        from psycopg import sql

        row = conn.execute(sql.SQL("EXPLAIN (FORMAT JSON) {}").format(stmt), params).fetchone()
        plan = row[0] if row is not None else []
        return '"Index Scan"' in json.dumps(plan)
