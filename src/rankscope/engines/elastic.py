"""Elasticsearch and OpenSearch through their official Python clients.

``elasticsearch`` (``pip install 'rankscope[es]'``) and ``opensearch`` (``'rankscope[opensearch]'``)
index into one index of a cluster given by ``url`` (default ``$RANKSCOPE_ES_URL``, or
``$RANKSCOPE_OPENSEARCH_URL`` for OpenSearch): the index is created with the BM25 parameters and
analyzer of the options (see :mod:`rankscope.engines._es_dsl` for the bodies), filled with the
clients' streaming bulk helper (documents read once, ``bulk_size`` per request; rejected items,
HTTP 429, are retried with backoff), refreshed, and searched with one ``_search`` per query.

Failures surface as :class:`EngineError` naming the cluster, the request and the server's error
type and reason: the client retries 429 / 502 / 503 / 504 and timeouts ``max_retries`` times;
a search that some shards failed (``_shards.failed > 0``) or that timed out on the server is
refused unless ``allow_partial_results`` is set, so a partial ranking never enters a run.

An index the engine names itself (``rankscope-<random>``) is deleted on close; an index named by
the ``index`` option is kept unless ``drop_on_close`` is set.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

from rankscope.config import environment
from rankscope.engines._es_dsl import (
    MultiMatchType,
    QuerySyntax,
    bulk_action,
    check_analyzer,
    index_body,
    search_body,
)
from rankscope.engines.base import Document, Engine, Hit, Query, QueryKind, register_engine
from rankscope.errors import ConfigError, EngineError
from rankscope.util.extras import needs_extra

# Imported where used, so that this module imports without them: elasticsearch and opensearch-py
# (the es and opensearch extras).

ES_URL_ENV = "RANKSCOPE_ES_URL"
OPENSEARCH_URL_ENV = "RANKSCOPE_OPENSEARCH_URL"
_INDEX_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_.")


def describe_error(exc: BaseException) -> str:
    """The status, error type and reason of a client exception, on one line."""
    status = getattr(exc, "status_code", None)
    meta = getattr(exc, "meta", None)
    if status is None and meta is not None:
        status = getattr(meta, "status", None)
    body = getattr(exc, "body", None)
    if body is None:
        body = getattr(exc, "info", None)
    detail = ""
    if isinstance(body, Mapping):
        err = body.get("error")
        if isinstance(err, Mapping):
            cause = err.get("root_cause")
            first = cause[0] if isinstance(cause, list) and cause else err
            if isinstance(first, Mapping):
                detail = f"{first.get('type', '')}: {first.get('reason', '')}".strip(": ")
        elif err:
            detail = str(err)
    if isinstance(exc, BaseException) and type(exc).__name__ == "BulkIndexError":
        errors = getattr(exc, "errors", None) or (exc.args[1] if len(exc.args) > 1 else [])
        if errors:
            first_item = next(iter(errors[0].values())) if isinstance(errors[0], Mapping) else {}
            error = first_item.get("error", {}) if isinstance(first_item, Mapping) else {}
            reason = error.get("reason", error) if isinstance(error, Mapping) else error
            detail = (
                f"{len(errors)} document(s) rejected; first: id "
                f"{first_item.get('_id')!r}, status {first_item.get('status')}: {reason}"
            )
    text = detail or " ".join(str(exc).split()) or type(exc).__name__
    prefix = f"HTTP {status} " if isinstance(status, int) else ""
    return f"{prefix}{type(exc).__name__}: {text}"[:600]


class _ClusterEngine(Engine):
    """What the Elasticsearch and OpenSearch engines share; subclasses make the client."""

    supported_kinds: ClassVar[frozenset[QueryKind]] = frozenset(
        {"query_string", "match", "multi_match", "phrase", "boolean"}
    )
    thread_safe = True
    url_env: ClassVar[str] = ES_URL_ENV
    extra: ClassVar[str] = "es"

    def __init__(
        self,
        url: str | None = None,
        *,
        index: str | None = None,
        k1: float = 1.2,
        b: float = 0.75,
        analyzer: str | Mapping[str, Any] = "english",
        multi_match_type: MultiMatchType = "best_fields",
        query_syntax: QuerySyntax = "escape",
        shards: int = 1,
        replicas: int = 0,
        bulk_size: int = 500,
        max_retries: int = 3,
        retry_on_status: Sequence[int] = (429, 502, 503, 504),
        initial_backoff: float = 2.0,
        request_timeout: float = 30.0,
        allow_partial_results: bool = False,
        drop_on_close: bool | None = None,
        api_key: str | None = None,
        username: str | None = None,
        password: str | None = None,
        verify_certs: bool = True,
        ca_certs: str | None = None,
    ) -> None:
        env = environment()
        # opensearch falls back on the Elasticsearch variable (both speak the same wire format)
        from_env = env.es_url if self.url_env == ES_URL_ENV else env.opensearch_url or env.es_url
        url = url or from_env
        if not url:
            raise ConfigError(
                f"{self.name} engine needs the cluster's URL",
                hint=f"pass url: http://host:9200 in the engine options, or set {self.url_env}",
            )
        self.url = str(url).rstrip("/")
        if not (float(k1) >= 0 and 0 <= float(b) <= 1):
            raise ConfigError(
                f"{self.name} engine options 'k1' and 'b' need k1 >= 0 and 0 <= b <= 1",
                value={"k1": k1, "b": b},
            )
        if multi_match_type not in ("best_fields", "most_fields"):
            raise ConfigError(
                f"{self.name} engine option 'multi_match_type' is unknown",
                value=multi_match_type,
                hint="use best_fields (Elasticsearch's default) or most_fields (sum)",
            )
        if query_syntax not in ("escape", "lucene"):
            raise ConfigError(
                f"{self.name} engine option 'query_syntax' is unknown",
                value=query_syntax,
                hint="escape (user text is words only) or lucene (passed as written)",
            )
        if index is not None and (
            not index or index[0] in "-_+" or not set(index) <= _INDEX_NAME_CHARS
        ):
            raise ConfigError(
                f"{self.name} engine option 'index' is not a valid index name",
                value=index,
                hint="lowercase letters, digits, '-', '_' and '.', not starting with -, _ or +",
            )
        self.index_name = index or f"rankscope-{secrets.token_hex(6)}"
        self.drop_on_close = (index is None) if drop_on_close is None else bool(drop_on_close)
        self.k1 = float(k1)
        self.b = float(b)
        self.analyzer = check_analyzer(analyzer)
        self.multi_match_type: MultiMatchType = multi_match_type
        self.query_syntax: QuerySyntax = query_syntax
        self.shards = int(shards)
        self.replicas = int(replicas)
        self.bulk_size = max(1, int(bulk_size))
        self.max_retries = max(0, int(max_retries))
        self.retry_on_status = tuple(int(s) for s in retry_on_status)
        self.initial_backoff = float(initial_backoff)
        self.request_timeout = float(request_timeout)
        self.allow_partial_results = bool(allow_partial_results)
        self._auth = {"api_key": api_key, "username": username, "password": password}
        self.verify_certs = bool(verify_certs)
        self.ca_certs = ca_certs
        self._client: Any = None
        self._created = False
        self._closed = False

    # -- what subclasses provide ----------------------------------------------------------------

    def _make_client(self) -> Any:
        raise NotImplementedError

    def _bulk(self, client: Any, actions: Iterable[dict[str, Any]]) -> Iterable[tuple[bool, Any]]:
        raise NotImplementedError

    def _search_request(self, client: Any, body: dict[str, Any]) -> Any:
        return client.search(index=self.index_name, body=body)

    # -- what both clients take alike -----------------------------------------------------------

    def _missing_client(self, exc: ImportError, package: str) -> EngineError:
        return EngineError(
            needs_extra(f"engine '{self.name}'", f"the {package} client ({exc})", self.extra)
        )

    def _client_options(self) -> dict[str, Any]:
        """The retry and TLS options of either client's constructor (auth aside)."""
        options: dict[str, Any] = {
            "max_retries": self.max_retries,
            "retry_on_status": self.retry_on_status,
            "retry_on_timeout": True,
            "verify_certs": self.verify_certs,
        }
        if self.ca_certs:
            options["ca_certs"] = self.ca_certs
        return options

    def _bulk_options(self) -> dict[str, Any]:
        """The options of either client's ``helpers.streaming_bulk``."""
        return {
            "chunk_size": self.bulk_size,
            "max_retries": self.max_retries,
            "initial_backoff": self.initial_backoff,
            "max_backoff": max(self.initial_backoff, 60.0),
            "raise_on_error": False,
            "yield_ok": False,
        }

    # -- plumbing -------------------------------------------------------------------------------

    def _connect(self) -> Any:
        if self._closed:
            raise EngineError(f"{self.name} engine is closed; create a new one")
        if self._client is None:
            self._client = self._make_client()
        return self._client

    def _fail(self, doing: str, exc: BaseException) -> EngineError:
        hint = ""
        name = type(exc).__name__
        if "Timeout" in name:
            hint = (
                f" (no answer within request_timeout={self.request_timeout:g} s after "
                f"{self.max_retries} retries; raise request_timeout or check the cluster's load)"
            )
        elif "Connection" in name:
            hint = " (is the cluster running and the URL right?)"
        return EngineError(
            f"{self.name} engine: {doing} at {self.url} failed: {describe_error(exc)}{hint}"
        )

    # -- indexing -------------------------------------------------------------------------------

    def index(self, docs: Iterable[Document]) -> None:
        client = self._connect()
        body = index_body(
            k1=self.k1,
            b=self.b,
            analyzer=self.analyzer,
            shards=self.shards,
            replicas=self.replicas,
        )
        try:
            client.indices.delete(index=self.index_name, ignore_unavailable=True)
            client.indices.create(index=self.index_name, body=body)
        except Exception as exc:
            raise self._fail(f"creating index {self.index_name!r}", exc) from exc
        self._created = True
        actions = (bulk_action(self.index_name, d) for d in docs)
        failed: list[Mapping[str, Any]] = []
        try:
            # the helpers retry rejected items (429) only when they do not raise on item errors;
            # what still failed after the retries comes back here, and is reported below
            for ok, item in self._bulk(client, actions):
                if not ok:
                    failed.append(next(iter(item.values())) if isinstance(item, Mapping) else {})
            client.indices.refresh(index=self.index_name)
        except EngineError:
            raise
        except Exception as exc:
            raise self._fail(f"bulk indexing into {self.index_name!r}", exc) from exc
        if failed:
            first = failed[0]
            error = first.get("error")
            reason = error.get("reason", error) if isinstance(error, Mapping) else error
            kind = error.get("type", "") if isinstance(error, Mapping) else ""
            raise EngineError(
                f"{self.name} engine: {len(failed)} document(s) were not indexed into "
                f"{self.index_name!r} at {self.url} after {self.max_retries} retries; first: "
                f"id {first.get('_id')!r}, HTTP {first.get('status')} {kind}: {reason}"
            )

    # -- searching ------------------------------------------------------------------------------

    def search_body(self, query: Query, k: int) -> dict[str, Any] | None:
        """The ``_search`` body sent for ``query`` (None: nothing to search for)."""
        return search_body(
            query, k, multi_match_type=self.multi_match_type, query_syntax=self.query_syntax
        )

    def _search(self, query: Query, k: int) -> list[Hit]:
        client = self._connect()
        if not self._created:
            raise EngineError(f"{self.name} engine has no index yet; call index() first")
        body = self.search_body(query, k)
        if body is None:
            return []
        try:
            response = self._search_request(client, body)
        except Exception as exc:
            raise self._fail(f"searching query {query.id!r}", exc) from exc
        data: Mapping[str, Any] = getattr(response, "body", response)
        shards = data.get("_shards") or {}
        failed = int(shards.get("failed", 0) or 0)
        if data.get("timed_out") and not self.allow_partial_results:
            raise EngineError(
                f"{self.name} engine: query {query.id!r} timed out on the cluster at {self.url} "
                f"(its results would be partial); raise the cluster's search timeout or set "
                f"allow_partial_results: true"
            )
        if failed and not self.allow_partial_results:
            reasons = [
                str((f.get("reason") or {}).get("reason", f.get("reason")))
                for f in shards.get("failures") or []
                if isinstance(f, Mapping)
            ]
            raise EngineError(
                f"{self.name} engine: query {query.id!r}: {failed} of {shards.get('total')} "
                f"shards failed at {self.url} ({'; '.join(reasons)[:300] or 'no reason given'}); "
                f"the ranking would be partial. Fix the cluster or set allow_partial_results: true"
            )
        hits = (data.get("hits") or {}).get("hits") or []
        return [Hit(doc_id=str(h["_id"]), score=h.get("_score")) for h in hits][:k]

    def close(self) -> None:
        if self._client is not None:
            try:
                if self.drop_on_close and self._created:
                    self._client.indices.delete(index=self.index_name, ignore_unavailable=True)
            except Exception as exc:
                raise self._fail(f"deleting index {self.index_name!r}", exc) from exc
            finally:
                self._client.close()
                self._client = None
        self._closed = True


@register_engine("elasticsearch")
class ElasticsearchEngine(_ClusterEngine):
    """Elasticsearch through the ``elasticsearch`` client. See the module docstring; options:
    ``url``, ``index``, ``k1``, ``b``, ``analyzer`` (a built-in name, default ``english``, or a
    custom analyzer definition), ``multi_match_type``, ``query_syntax``, ``shards``,
    ``replicas``, ``bulk_size``, ``max_retries``, ``retry_on_status``, ``initial_backoff``,
    ``request_timeout``, ``allow_partial_results``, ``drop_on_close``, ``api_key``,
    ``username``/``password``, ``verify_certs``, ``ca_certs``."""

    name = "elasticsearch"
    url_env = ES_URL_ENV
    extra = "es"

    def _make_client(self) -> Any:
        try:
            from elasticsearch import Elasticsearch
        except ImportError as exc:
            raise self._missing_client(exc, "elasticsearch") from exc
        auth: dict[str, Any] = {}
        if self._auth["api_key"]:
            auth["api_key"] = self._auth["api_key"]
        elif self._auth["username"]:
            auth["basic_auth"] = (self._auth["username"], self._auth["password"] or "")
        return Elasticsearch(
            self.url, request_timeout=self.request_timeout, **self._client_options(), **auth
        )

    def _bulk(self, client: Any, actions: Iterable[dict[str, Any]]) -> Iterable[tuple[bool, Any]]:
        from elasticsearch import helpers

        return helpers.streaming_bulk(client, actions, **self._bulk_options())


@register_engine("opensearch")
class OpenSearchEngine(_ClusterEngine):
    """OpenSearch through the ``opensearch-py`` client; the options of ``elasticsearch``
    (``url`` defaults to ``$RANKSCOPE_OPENSEARCH_URL``, then ``$RANKSCOPE_ES_URL``)."""

    name = "opensearch"
    url_env = OPENSEARCH_URL_ENV
    extra = "opensearch"

    def _make_client(self) -> Any:
        try:
            from opensearchpy import OpenSearch
        except ImportError as exc:
            raise self._missing_client(exc, "opensearch-py") from exc
        auth: dict[str, Any] = {}
        if self._auth["username"]:
            auth["http_auth"] = (self._auth["username"], self._auth["password"] or "")
        elif self._auth["api_key"]:
            auth["headers"] = {"Authorization": f"ApiKey {self._auth['api_key']}"}
        return OpenSearch(
            hosts=[self.url], timeout=self.request_timeout, **self._client_options(), **auth
        )

    def _bulk(self, client: Any, actions: Iterable[dict[str, Any]]) -> Iterable[tuple[bool, Any]]:
        from opensearchpy import helpers

        bulk: Any = helpers.streaming_bulk  # its stubs want whole-second backoffs
        return bulk(client, actions, **self._bulk_options())  # type: ignore[no-any-return]
