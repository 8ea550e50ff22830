"""Elasticsearch / OpenSearch: request bodies against golden DSL files, the real clients against
the loopback cluster (``rankscope.testing.es_server``), retries and errors.

The golden files (``tests/engines/golden/es_*.json``) were checked against Elasticsearch's
reference: ``query_string`` (``query``, ``default_field``, ``default_operator``), ``match``
(``{"field": {"query": ...}}``), ``multi_match`` (``fields`` with ``field^boost``, ``type``
``best_fields`` the default), ``match_phrase`` (``query``, ``slop``), ``bool`` (``must`` /
``should`` / ``must_not`` arrays), the similarity module (``settings.index.similarity.default``
with ``type: BM25``, ``k1``, ``b``), custom analyzers (``settings.analysis.analyzer``), dynamic
templates (``match_mapping_type: string``) and ``copy_to``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from engines_contract_data import CONTRACT_DOCS

from rankscope.engines import Document, Engine, Query, create_engine
from rankscope.engines._es_dsl import index_body, search_body
from rankscope.errors import ConfigError, EngineError
from rankscope.testing.es_server import EsServer, Fault

GOLDEN = Path(__file__).parent / "golden"

GOLDEN_QUERIES: dict[str, Query] = {
    "es_query_string": Query("q-qs", "boundary layer: AND (turbulence)?"),
    "es_match": Query("q-match", "bread", kind="match", field="title"),
    "es_multi_match": Query(
        "q-mm", "tomato soup", kind="multi_match", fields=(("title", 3.0), ("text", 1.0))
    ),
    "es_phrase": Query("q-phrase", "blunt body", kind="phrase", field="text", slop=2),
    "es_phrase_all_fields": Query("q-phrase-all", "shock wave", kind="phrase"),
    "es_boolean": Query(
        "q-bool", "bread -soup", kind="boolean", must=("bread",), should=("hot oven",),
        must_not=("soup",),
    ),
}  # fmt: skip
CUSTOM_ANALYZER = {"tokenizer": "standard", "filter": ["lowercase", "stop", "porter_stem"]}

FLAVORS = [
    pytest.param("elasticsearch", marks=pytest.mark.skipif(
        not __import__("importlib").util.find_spec("elasticsearch"), reason="no elasticsearch")),
    pytest.param("opensearch", marks=pytest.mark.skipif(
        not __import__("importlib").util.find_spec("opensearchpy"), reason="no opensearch-py")),
]  # fmt: skip


def golden(name: str) -> object:
    return json.loads((GOLDEN / f"{name}.json").read_text())


@pytest.fixture(params=FLAVORS)
def server(request: pytest.FixtureRequest) -> Iterator[EsServer]:
    with EsServer(request.param) as s:
        yield s


def engine_for(server: EsServer, **options: object) -> Engine:
    options.setdefault("initial_backoff", 0.01)
    return create_engine(server.flavor, url=server.url, **options)


def once(docs: tuple[Document, ...]) -> Iterator[Document]:
    yield from docs


# -- golden bodies ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(GOLDEN_QUERIES))
def test_search_bodies_match_the_golden_files(name: str) -> None:
    assert search_body(GOLDEN_QUERIES[name], 10) == golden(name)


def test_index_bodies_match_the_golden_files() -> None:
    assert index_body(k1=0.9, b=0.4, analyzer="english") == golden("es_create_index")
    custom = {"type": "custom", **CUSTOM_ANALYZER}
    assert index_body(k1=1.2, b=0.75, analyzer=custom) == golden("es_create_index_custom_analyzer")


def test_the_real_client_sends_the_golden_bodies(server: EsServer) -> None:
    with engine_for(server, k1=0.9, b=0.4, analyzer="english") as e:
        e.index(once(CONTRACT_DOCS))
        (create,) = server.recorded(f"/{e.index_name}", "PUT")  # type: ignore[attr-defined]
        assert create.body == golden("es_create_index")
        for name, query in GOLDEN_QUERIES.items():
            e.search(query, 10)
            sent = server.recorded("/_search")[-1]
            assert sent.body == golden(name), name
    with engine_for(server, analyzer=CUSTOM_ANALYZER) as e:
        e.index(CONTRACT_DOCS)
        (create,) = server.recorded(f"/{e.index_name}", "PUT")  # type: ignore[attr-defined]
        assert create.body == golden("es_create_index_custom_analyzer")


def test_bulk_streams_ndjson_in_chunks(server: EsServer) -> None:
    with engine_for(server, bulk_size=3) as e:
        e.index(once(CONTRACT_DOCS))
        bulks = server.recorded("/_bulk")
        assert [len(b.body) for b in bulks] == [6, 6, 4]  # action + source per document
        first_action, first_source = bulks[0].body[:2]
        assert first_action == {"index": {"_index": e.index_name, "_id": "d1"}}  # type: ignore[attr-defined]
        assert first_source == {"title": CONTRACT_DOCS[0].title, "text": CONTRACT_DOCS[0].text}
        assert bulks[-1].body[-1]["tags"] == "food recipe winter"
        # refreshed after the bulk, so everything is searchable
        assert [
            h.doc_id for h in e.search(Query("q", "winter", kind="match", field="tags"), 5)
        ] == ["d8"]


# -- retries and errors -------------------------------------------------------------------------


def test_a_429_on_the_bulk_request_is_retried(server: EsServer) -> None:
    server.inject(Fault(path=r"/_bulk$", status=429, times=2))
    with engine_for(server) as e:
        e.index(CONTRACT_DOCS)
        assert len(server.recorded("/_bulk")) == 3
        assert e.search(Query("q", "boundary layer"), 1)[0].doc_id == "d1"


def test_rejected_bulk_items_are_retried_with_backoff(server: EsServer) -> None:
    server.inject(Fault(path=r"/_bulk$", reject_items=3))
    with engine_for(server) as e:
        e.index(CONTRACT_DOCS)
        bulks = server.recorded("/_bulk")
        assert len(bulks) == 2 and len(bulks[1].body) == 6  # only the 3 rejected ones again
        hits = e.search(Query("q", "the", kind="match", field="text"), 100)
        assert len(server.indices[e.index_name].sources) == len(CONTRACT_DOCS)  # type: ignore[attr-defined]
        assert hits is not None


def test_persistent_429_fails_with_the_servers_reason(server: EsServer) -> None:
    server.inject(Fault(path=r"/_bulk$", status=429, times=50))
    with engine_for(server, max_retries=1) as e, pytest.raises(EngineError) as info:
        e.index(CONTRACT_DOCS)
    assert "429" in str(info.value) and "es_rejected_execution_exception" in str(info.value)
    assert server.url in str(info.value)


def test_rejected_items_beyond_the_retries_name_the_document(server: EsServer) -> None:
    server.inject(Fault(path=r"/_bulk$", reject_items=100, item_status=400, times=5))
    with engine_for(server, max_retries=1) as e, pytest.raises(EngineError, match="'d1'"):
        e.index(CONTRACT_DOCS)


def test_a_5xx_on_search_is_retried_then_reported(server: EsServer) -> None:
    with engine_for(server, max_retries=2) as e:
        e.index(CONTRACT_DOCS)
        server.inject(Fault(path=r"/_search$", status=503, times=1))
        assert e.search(Query("q", "boundary layer"), 1)[0].doc_id == "d1"
        server.inject(Fault(path=r"/_search$", status=500, times=10))
        with pytest.raises(EngineError, match="HTTP 500"):
            e.search(Query("q2", "boundary layer"), 1)


def test_shard_failures_are_refused_unless_partial_results_are_allowed(server: EsServer) -> None:
    with engine_for(server) as e:
        e.index(CONTRACT_DOCS)
        server.inject(Fault(path=r"/_search$", shard_failure=True))
        with pytest.raises(EngineError, match=r"1 of 2 shards failed.*Node not connected"):
            e.search(Query("q", "flow"), 5)
    with engine_for(server, allow_partial_results=True) as e:
        e.index(CONTRACT_DOCS)
        full = e.search(Query("q", "flow"), 5)
        server.inject(Fault(path=r"/_search$", shard_failure=True))
        partial = e.search(Query("q", "flow"), 5)
        assert 0 < len(partial) < len(full)


def test_a_search_timed_out_on_the_server_is_refused(server: EsServer) -> None:
    with engine_for(server) as e:
        e.index(CONTRACT_DOCS)
        server.inject(Fault(path=r"/_search$", timed_out=True))
        with pytest.raises(EngineError, match="timed out on the cluster"):
            e.search(Query("q", "flow"), 5)


def test_a_client_timeout_is_retried_then_reported(server: EsServer) -> None:
    with engine_for(server, request_timeout=0.3, max_retries=1) as e:
        e.index(CONTRACT_DOCS)
        server.inject(Fault(path=r"/_search$", delay=0.8, times=1))
        assert e.search(Query("q", "boundary layer"), 1)[0].doc_id == "d1"  # the retry answers
        server.inject(Fault(path=r"/_search$", delay=0.8, times=2))
        with pytest.raises(EngineError, match=r"request_timeout=0\.3"):
            e.search(Query("q2", "boundary layer"), 1)


def test_an_unreachable_cluster_is_named(server: EsServer) -> None:
    e = create_engine(server.flavor, url="http://127.0.0.1:9", max_retries=0)
    with pytest.raises(EngineError, match=r"127\.0\.0\.1:9.*cluster running"):
        e.index(CONTRACT_DOCS)
    e.close()


# -- options ------------------------------------------------------------------------------------


def test_an_engine_named_index_is_deleted_on_close_a_given_one_kept(server: EsServer) -> None:
    with engine_for(server) as e:
        e.index(CONTRACT_DOCS)
        auto = e.index_name  # type: ignore[attr-defined]
        assert auto.startswith("rankscope-") and auto in server.indices
    assert auto not in server.indices
    with engine_for(server, index="kept-index") as e:
        e.index(CONTRACT_DOCS)
    assert "kept-index" in server.indices
    with engine_for(server, index="kept-index", drop_on_close=True) as e:
        e.index(CONTRACT_DOCS)
    assert "kept-index" not in server.indices


def test_bm25_parameters_reach_the_cluster(server: EsServer) -> None:
    scores = []
    for k1 in (0.5, 2.0):
        with engine_for(server, k1=k1, b=0.75) as e:
            e.index(CONTRACT_DOCS)
            scores.append([h.score for h in e.search(Query("q", "flow wall"), 5)])
    assert scores[0] != scores[1]


def test_lucene_syntax_is_passed_through_only_when_asked(server: EsServer) -> None:
    with engine_for(server, query_syntax="lucene") as e:
        e.index(CONTRACT_DOCS)
        assert [h.doc_id for h in e.search(Query("q", "title:bread"), 5)] == ["d3"]
        assert server.recorded("/_search")[-1].body["query"]["query_string"]["query"] == (
            "title:bread"
        )
    with engine_for(server) as e:
        e.index(CONTRACT_DOCS)
        e.search(Query("q", "title:bread"), 5)
        assert server.recorded("/_search")[-1].body["query"]["query_string"]["query"] == (
            "title bread"
        )


def test_configuration_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RANKSCOPE_ES_URL", raising=False)
    monkeypatch.delenv("RANKSCOPE_OPENSEARCH_URL", raising=False)
    with pytest.raises(ConfigError, match="RANKSCOPE_ES_URL"):
        create_engine("elasticsearch")
    with pytest.raises(ConfigError, match="RANKSCOPE_OPENSEARCH_URL"):
        create_engine("opensearch")
    with pytest.raises(ConfigError, match="index"):
        create_engine("elasticsearch", url="http://127.0.0.1:9", index="Bad Name")
    with pytest.raises(ConfigError, match="multi_match_type"):
        create_engine("elasticsearch", url="http://127.0.0.1:9", multi_match_type="cross")


def test_a_field_name_elasticsearch_cannot_hold_is_refused(server: EsServer) -> None:
    with engine_for(server) as e, pytest.raises(EngineError, match="_private"):
        e.index([Document("x", "text", fields={"_private": "v"})])
