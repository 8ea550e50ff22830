"""Engines over a user's own system: a Python function, an HTTP search API, a run file."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import numpy as np
import pytest

from rankscope.engines import Document, Engine, Hit, Query, create_engine
from rankscope.engines.http import follow, parse_path
from rankscope.engines.python import coerce_hits
from rankscope.engines.run_file import RunFileEngine
from rankscope.errors import ConfigError, EngineError, UnsupportedQueryError

DOCS = [
    Document("a", "the quick brown fox", "Foxes"),
    Document("b", "a lazy brown dog", "Dogs"),
    Document("c", "bread and butter", "Food"),
]


# -- python -----------------------------------------------------------------------------------


def broken_search(text: str, k: int) -> list[tuple[str, float]]:
    raise KeyError("index not loaded")


def unordered_search(text: str, k: int) -> list[object]:
    return [("x", 1.0), Hit("y", 3.0), {"doc_id": "z", "score": 2}, ("x", 0.5)]


def test_python_engine_calls_the_function_and_orders_hits() -> None:
    with create_engine("python", search=unordered_search) as e:
        hits = e.search(Query("q", "anything"), 10)
        assert [(h.doc_id, h.score) for h in hits] == [("y", 3.0), ("z", 2.0), ("x", 1.0)]
        assert [h.doc_id for h in e.search(Query("q", "anything"), 2)] == ["y", "z"]
        with pytest.raises(UnsupportedQueryError):
            e.search(Query("q", "x", kind="match", field="title"), 3)


def test_user_errors_are_wrapped_naming_the_function() -> None:
    e = create_engine("python", search=f"{__name__}:broken_search")
    with pytest.raises(EngineError, match=r"broken_search.*query 'q7'.*KeyError.*index not loaded"):
        e.search(Query("q7", "x"), 3)
    e = create_engine(
        "python", search=f"{__name__}:unordered_search", index=f"{__name__}:broken_search"
    )
    with pytest.raises(EngineError, match=r"index function .*broken_search.* failed"):
        e.index(DOCS)


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ("a b c", "returned str"),
        ({"a": 1.0}, "returned dict"),
        ([("a",)], "malformed hit at position 0"),
        ([("a", "high")], r"document 'a' \(position 0\): score 'high' \(str\) is not a number"),
        ([{"id": "a"}], r"score None \(NoneType\) is not a number"),
        ([("a", 1.0), ("b", float("nan"))], r"document 'b' \(position 1\).*not a finite"),
        ([("a", True)], "score True"),
        (None, "returned NoneType"),
    ],
)
def test_malformed_results_are_refused(result: object, message: str) -> None:
    with pytest.raises(EngineError, match=message):
        coerce_hits(result, "search function 'm:f'")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"search": "no_colon"}, "'module:function'"),
        ({"search": "no_such_module_xyz:f"}, "cannot import module 'no_such_module_xyz'"),
        ({"search": "json:no_such_function"}, "has no 'no_such_function'"),
        ({"search": "json:__doc__"}, "is not callable"),
        ({"search": "json:dumps", "call": "both"}, "'text' or 'query'"),
        ({"search": "json:dumps", "kinds": ["match"]}, "only query_string"),
        ({"search": "json:dumps", "call": "query", "kinds": ["fuzzy"]}, "unknown kinds"),
    ],
)
def test_python_options_are_checked(options: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        create_engine("python", **options)


def scores_of_every_type(text: str, k: int) -> list[tuple[str, object]]:
    return [("f32", np.float32(2.5)), ("i64", np.int64(3)), ("str", " 1.5 "), ("f", 0.5)]


def infinite_score(text: str, k: int) -> list[tuple[str, float]]:
    return [("a", 1.0), ("b", float("inf"))]


def test_python_engine_accepts_numpy_scalars_and_numeric_strings() -> None:
    with create_engine("python", search=scores_of_every_type) as e:
        hits = e.search(Query("q", "x"), 10)
    assert [(h.doc_id, h.score) for h in hits] == [("i64", 3.0), ("f32", 2.5), ("str", 1.5),
                                                   ("f", 0.5)]  # fmt: skip
    assert all(type(h.score) is float for h in hits)


def test_python_engine_refuses_an_infinite_score_naming_query_and_document() -> None:
    with (
        create_engine("python", search=infinite_score) as e,
        pytest.raises(EngineError, match=r"query 'q9', document 'b' .*score inf is not a finite"),
    ):
        e.search(Query("q9", "x"), 10)


class _RawScores(Engine):
    """An engine whose own code produces the scores given (e.g. a NaN from 0/0)."""

    name = "raw-scores"

    def __init__(self, scores: list[object]) -> None:
        self.scores = scores

    def index(self, docs: object) -> None:
        pass

    def _search(self, query: Query, k: int) -> list[Hit]:
        return [Hit(f"d{i}", s) for i, s in enumerate(self.scores)]  # type: ignore[arg-type]


def test_every_engine_search_refuses_non_finite_scores_and_converts_numpy() -> None:
    """The check sits in Engine.search, so no engine can hand a NaN to the runner."""
    e = _RawScores([np.float32(0.25), 1])
    assert [(h.score, type(h.score)) for h in e.search(Query("q", "x"), 5)] == [
        (0.25, float),
        (1.0, float),
    ]
    for bad in (float("nan"), float("-inf"), np.float32("nan")):
        e = _RawScores([1.0, bad])
        with pytest.raises(EngineError, match=r"engine 'raw-scores', query 'q2', document 'd1'"):
            e.search(Query("q2", "x"), 5)


# -- http -------------------------------------------------------------------------------------


def test_json_paths() -> None:
    assert parse_path("hits.hits[*]") == ["hits", "hits", None]
    assert parse_path("data[0].items") == ["data", 0, "items"]
    data = {"hits": {"hits": [{"_id": "a"}, {"_id": "b"}]}}
    assert follow(data, parse_path("hits.hits[*]._id"), "p", "w") == ["a", "b"]
    with pytest.raises(EngineError, match=r"no key 'hitz'.*found an object: hits"):
        follow(data, parse_path("hitz"), "hitz", "w")
    with pytest.raises(ConfigError, match="bad JSON path"):
        parse_path("a..b[x]")


def test_http_get_url_encodes_the_query(search_server: str) -> None:
    e = create_engine("http", url=search_server + "/echo?q={query}&n={k}", results_path="results")
    hits = e.search(Query("q", 'a&b=c "d" é/?#'), 7)
    assert hits[0].doc_id == "q=a%26b%3Dc%20%22d%22%20%C3%A9%2F%3F%23&n=7"
    e.close()


def test_http_post_fills_the_body_template(search_server: str) -> None:
    body = {"query": {"match": {"text": "{query}"}}, "size": "{k}", "note": "q={query}"}
    e = create_engine(
        "http", url=search_server + "/echo", method="POST", body=body, results_path="results"
    )
    sent = json.loads(e.search(Query("q", 'say "hi"'), 4)[0].doc_id)
    assert sent == {"query": {"match": {"text": 'say "hi"'}}, "size": 4, "note": 'q=say "hi"'}


def test_http_search_through_a_real_service(search_server: str) -> None:
    e = create_engine(
        "http",
        url=search_server + "/query",
        method="POST",
        body={"query": {"match": {"text": "{query}"}}, "size": "{k}"},
        results_path="hits.hits",
        id_field="_id",
        score_field="_score",
        index_url=search_server + "/index",
    )
    e.index(DOCS)
    hits = e.search(Query("q", "brown fox"), 5)
    assert [h.doc_id for h in hits] == ["a", "b"]
    # a root-level list, a nested id and a score sent as a string
    flat = create_engine("http", url=search_server + "/flat?q={query}", id_field="doc.id",
                         score_field="rel")  # fmt: skip
    assert [h.doc_id for h in flat.search(Query("q", "bread"), 5)] == ["c"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("2.5", 2.5), ('"2.5"', 2.5), ("3", 3.0)],
)
def test_http_accepts_numbers_and_numeric_strings(
    search_server: str, raw: str, expected: float
) -> None:
    with create_engine("http", url=search_server + f"/score?v={raw}") as e:
        hits = e.search(Query("q", "x"), 5)
    assert {h.doc_id: h.score for h in hits} == {"a": 1.0, "b": expected}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("NaN", "score nan is not a finite number"),
        ("Infinity", "score inf is not a finite number"),
        ('"NaN"', "score 'NaN' is not a finite number"),
        ('"high"', r"score 'high' \(str\) is not a number"),
        ("true", "score True"),
        ("null", "score None"),
    ],
)
def test_http_refuses_non_finite_and_non_numeric_scores(
    search_server: str, raw: str, message: str
) -> None:
    with (
        create_engine("http", url=search_server + f"/score?v={raw}") as e,
        pytest.raises(EngineError, match=r"query 'q3', result 1 \(id 'b'\).*" + message),
    ):
        e.search(Query("q3", "x"), 5)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_http_errors_are_clear(search_server: str) -> None:
    q = Query("q1", "fox")
    refused = create_engine("http", url=f"http://127.0.0.1:{_free_port()}/search?q={{query}}")
    with pytest.raises(EngineError, match=r"query 'q1': cannot connect to http://127.0.0.1:\d+"):
        refused.search(q, 3)
    with pytest.raises(EngineError, match=r"returned HTTP 503.*overloaded"):
        create_engine("http", url=search_server + "/error").search(q, 3)
    with pytest.raises(EngineError, match=r"not JSON.*oops"):
        create_engine("http", url=search_server + "/notjson").search(q, 3)
    with pytest.raises(EngineError, match="no key 'items'"):
        create_engine("http", url=search_server + "/search?q=x", results_path="items").search(q, 3)
    with pytest.raises(EngineError, match="leads to an object, not a list"):
        create_engine("http", url=search_server + "/search?q=x", results_path="hits").search(q, 3)
    # the service holds documents, but its hits carry "_id", not the default "id"
    create_engine("http", url=search_server + "/x", index_url=search_server + "/index").index(DOCS)
    no_id = create_engine("http", url=search_server + "/search?q={query}", results_path="hits.hits")
    with pytest.raises(EngineError, match="result 0: no key 'id'"):
        no_id.search(Query("q", "fox"), 3)


def test_http_timeout_is_reported(search_server: str) -> None:
    e = create_engine("http", url=search_server + "/slow?s=1", timeout=0.2)
    with pytest.raises(EngineError, match=r"did not answer within 0\.2s"):
        e.search(Query("q", "x"), 3)
    e.close()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"url": "ftp://x"}, "http:// or https://"),
        ({"url": "http://x", "method": "PUT"}, "GET or POST"),
        ({"url": "http://x", "method": "POST"}, "needs a 'body'"),
        ({"url": "http://x", "timeout": 0}, "positive"),
    ],
)
def test_http_options_are_checked(options: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        create_engine("http", **options)


# -- run file ---------------------------------------------------------------------------------


def test_run_file_answers_by_query_id(tmp_path: Path) -> None:
    path = tmp_path / "bm25.run"
    path.write_text(
        "1 Q0 d3 1 2.5 bm25\n1 Q0 d1 2 7.0 bm25\n1 Q0 d2 3 7.0 bm25\n2 Q0 d9 1 1.0 bm25\n"
    )
    with create_engine("run_file", path=str(path)) as e:
        e.index(DOCS)  # nothing to do
        hits = e.search(Query("1", "text is ignored", kind="phrase"), 10)
        # trec_eval order: score descending, ties by doc id descending
        assert [(h.doc_id, h.score) for h in hits] == [("d2", 7.0), ("d1", 7.0), ("d3", 2.5)]
        assert [h.doc_id for h in e.search(Query("1", ""), 1)] == ["d2"]
        assert e.search(Query("3", "unknown query"), 10) == []
        assert isinstance(e, RunFileEngine) and e.query_ids == ("1", "2")


def test_run_file_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"missing\.run.*run file not found"):
        create_engine("run_file", path=str(tmp_path / "missing.run"))


def test_a_non_finite_score_fails_only_its_configuration() -> None:
    """The benchmark records the refusal as that configuration's error, naming query and doc."""
    from rankscope.bench.runner import run_config
    from rankscope.suite import BenchConfig
    from rankscope.suite.schema import SuiteSettings as Settings

    settings = Settings(k=[1], max_k=5, warmup=0, repeats=1)
    config = BenchConfig(
        name="inf-cfg", engine="python", options={"search": f"{__name__}:infinite_score"}
    )
    record = run_config(config, DOCS, [Query("q5", "fox")], settings)
    assert record.status == "failed"
    assert record.error is not None
    assert "query 'q5', document 'b'" in record.error
    assert "not a finite number" in record.error


@pytest.mark.parametrize(
    "result",
    [
        [("b", 1.0), ("a", 2.0)],
        (["b", "a"], [1.0, 2.0]),
        [["b", "a"], [1, 2]],
        (np.array(["b", "a"]), np.array([1.0, 2.0], dtype=np.float32)),
        [{"id": "b", "score": 1.0}, {"doc_id": "a", "score": 2.0}],
    ],
)
def test_the_shapes_users_write_first_are_accepted(result: object) -> None:
    hits = coerce_hits(result, "f")
    assert sorted((h.doc_id, h.score) for h in hits) == [("a", 2.0), ("b", 1.0)]


def test_a_refused_result_states_the_contract_in_one_short_line() -> None:
    ids = [f"wiki-{i}" for i in range(100)]
    with pytest.raises(EngineError) as info:
        coerce_hits([ids, [1.0] * 99], "search function 'm:f', query 'q1'")
    assert str(info.value) == (
        "search function 'm:f', query 'q1' returned 100 ids but 99 scores; return a list of "
        "(doc_id, score) pairs, a pair of lists (ids, scores), or a list of {'id': ..., "
        "'score': ...} mappings (docs/own-retriever.md)"
    )
    with pytest.raises(EngineError) as info:
        coerce_hits([ids, ids], "f")  # ids as scores: neither shape
    message = str(info.value)
    assert "\n" not in message and len(message) < 300
    assert message.startswith("f returned a malformed hit at position 0: ['wiki-0', 'wiki-1', ")


class Retriever:
    """A retriever as a class: rankscope creates it and calls index, then search."""

    def __init__(self) -> None:
        self.docs: list[str] = []

    def index(self, docs: list[Document]) -> None:
        self.docs = [d.id for d in docs]

    def search(self, text: str, k: int) -> tuple[list[str], list[float]]:
        return self.docs[:k], [1.0 / (i + 1) for i in range(min(k, len(self.docs)))]


def test_a_class_is_created_once_and_its_index_and_search_are_called() -> None:
    with create_engine("python", search=f"{__name__}:Retriever") as e:
        e.index(DOCS)
        hits = e.search(Query("q", "x"), 2)
    assert [(h.doc_id, h.score) for h in hits] == [(DOCS[0].id, 1.0), (DOCS[1].id, 0.5)]
