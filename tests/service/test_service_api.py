"""The HTTP API on SQLite: the design's payloads, errors, limits, idempotency, feedback,
summaries with judged and heuristic rows apart, exports, thresholds."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient

from rankscope.cli.app import main
from rankscope.service.app import create_app
from rankscope.service.store.db import make_engine
from rankscope.service.store.keys import create_key
from serve_helpers import BATCH, COLLECT, METRICS, Service, bearer, doc, record, sqlite_settings

pytestmark = pytest.mark.service

DESIGN_FIELDS = {
    "query",
    "userId",
    "timestamp",
    "totalRetrieved",
    "totalRelevant",
    "relevantRetrieved",
    "precision",
    "recall",
    "f1Score",
    "meanReciprocalRank",
    "averagePrecision",
    "ndcg",
}
SUMMARY_FIELDS = {
    "totalQueries",
    "averagePrecision",
    "averageRecall",
    "averageF1Score",
    "averageMRR",
    "averageAP",
    "averageNDCG",
}


def post(service: Service, body: Any, key: str | None = None, path: str = COLLECT) -> Any:
    return service.client.post(path, json=body, headers=bearer(key or service.keys.alice))


def get(service: Service, path: str, key: str | None = None, **params: Any) -> Any:
    return service.client.get(path, params=params, headers=bearer(key or service.keys.alice))


def error_of(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["success"] is False
    error = body["error"]
    if error["code"] == "validation_error":  # errorCount: the errors, details the first 20
        assert set(error) == {"code", "message", "details", "errorCount"}
        assert len(error["details"]) == min(error["errorCount"], 20)
    else:
        assert set(error) == {"code", "message", "details"}
    assert "Traceback" not in response.text
    return error  # type: ignore[no-any-return]


def test_collect_returns_the_design_payload(service: Service) -> None:
    body = record(
        "how to rotate logs",
        [doc("a", 0.91, documentName="A", chunkIndex=2, content="text"), doc("b", 0.3)],
        queryId="q-1",
        relevantDocumentIds=["a"],
        options={
            "topicId": "ops",
            "searchTypes": {"semantic": True, "keyword": True, "hybrid": False, "web": False},
            "webResultsCount": 3,
            "documentIds": ["a", "b", "c"],
        },
    )
    r = post(service, body)
    assert r.status_code == 201
    payload = r.json()
    assert payload["success"] is True
    data = payload["data"]
    assert set(data) >= DESIGN_FIELDS
    assert data["userId"] == "alice" and data["queryId"] == "q-1" and data["topicId"] == "ops"
    assert data["webResultsRetrieved"] == 3 and data["totalSources"] == 5
    assert data["searchType"] == "keyword+semantic"
    assert data["documentIds"] == ["a", "b", "c"]
    assert data["minScore"] == 0.3 and data["maxScore"] == 0.91
    detail = get(service, f"{METRICS}/{data['id']}").json()["data"]
    assert detail["rankedList"] == [
        {"position": 1, "documentId": "a", "documentName": "A", "chunkIndex": 2, "score": 0.91},
        {"position": 2, "documentId": "b", "documentName": None, "chunkIndex": None, "score": 0.3},
    ]
    assert detail["judgments"] == {"a": 1}


def test_list_and_summary_keep_judged_and_heuristic_apart(service: Service) -> None:
    post(service, record(docs=[doc("a", 0.9)], relevantDocumentIds=["b"]))  # judged: all 0
    post(service, record(docs=[doc("a", 0.9)]))  # heuristic: all 1
    post(service, record(docs=[doc("a", 0.9)], relevantDocumentIds=["a"]))  # judged: all 1
    listed = get(service, METRICS).json()["data"]
    assert set(listed) >= SUMMARY_FIELDS
    assert listed["judgmentSource"] == "judged"
    # totalQueries: the records of the selection; the averages are the judged rows' alone
    assert listed["totalQueries"] == 3 and listed["averagePrecision"] == 0.5
    groups = listed["byJudgmentSource"]
    assert groups["judged"]["count"] == 2
    assert groups["heuristic"]["count"] == 1 and groups["heuristic"]["ndcg"]["mean"] == 1.0
    assert groups["judged"]["precision"]["low"] < 0.5 < groups["judged"]["precision"]["high"]
    heur = get(service, METRICS, judgments="heuristic").json()["data"]
    assert heur["totalQueries"] == 3 and heur["averageNDCG"] == 1.0
    only = get(service, METRICS, judgmentSource="heuristic").json()["data"]
    assert only["totalQueries"] == 1 and len(only["queries"]) == 1
    assert len(listed["queries"]) == 3
    summary = get(service, f"{METRICS}/summary").json()["data"]
    assert set(summary) >= SUMMARY_FIELDS and set(summary["dateRange"]) == {"start", "end"}
    assert summary["dateRange"]["start"] <= summary["dateRange"]["end"]
    ranged = get(service, f"{METRICS}/summary", startDate="2020-01-01", endDate="2020-01-31")
    assert ranged.json()["data"]["totalQueries"] == 0
    assert ranged.json()["data"]["dateRange"] == {
        "start": "2020-01-01T00:00:00.000Z",
        "end": "2020-01-31T23:59:59.999Z",
    }
    assert ranged.json()["data"]["recordRange"] == {"start": None, "end": None}


def test_only_heuristic_rows_fill_the_top_level_with_them(service: Service) -> None:
    post(service, record(docs=[doc("a", 0.9), doc("b", 0.1)]))
    data = get(service, METRICS).json()["data"]
    assert data["judgmentSource"] == "heuristic" and data["totalQueries"] == 1
    assert data["byJudgmentSource"]["judged"]["count"] == 0


def test_timeseries_and_breakdown_have_intervals(service: Service) -> None:
    rows = [
        record(
            docs=[doc("a", 0.9)],
            relevantDocumentIds=["a"],
            timestamp=f"2024-05-0{d}T10:00:00Z",
            options={"topicId": t, "searchTypes": {"semantic": True}},
        )
        for d, t in ((1, "x"), (1, "y"), (2, "x"), (8, "x"))
    ]
    assert post(service, {"records": rows}, path=BATCH).status_code == 201
    days = get(service, f"{METRICS}/timeseries", bucket="day").json()["data"]
    assert [(p["start"], p["stats"]["count"]) for p in days["points"]] == [
        ("2024-05-01T00:00:00Z", 2),
        ("2024-05-02T00:00:00Z", 1),
        ("2024-05-08T00:00:00Z", 1),
    ]
    weeks = get(service, f"{METRICS}/timeseries", bucket="week").json()["data"]
    # 2024-05-01 is a Wednesday: its week starts on Monday 2024-04-29
    assert [(p["start"], p["stats"]["count"]) for p in weeks["points"]] == [
        ("2024-04-29T00:00:00Z", 3),
        ("2024-05-06T00:00:00Z", 1),
    ]
    hours = get(service, f"{METRICS}/timeseries", bucket="hour").json()["data"]
    assert hours["points"][0]["start"] == "2024-05-01T10:00:00Z"
    topics = get(service, f"{METRICS}/breakdown", by="topic").json()["data"]
    assert [(g["key"], g["stats"]["count"]) for g in topics["groups"]] == [("x", 3), ("y", 1)]
    x = topics["groups"][0]["stats"]["precision"]
    assert x == {"mean": 1.0, "low": 1.0, "high": 1.0}
    types = get(service, f"{METRICS}/breakdown", by="searchType").json()["data"]
    assert [g["key"] for g in types["groups"]] == ["semantic"]
    assert error_of(get(service, f"{METRICS}/timeseries", bucket="month"), 422)


def test_idempotent_collect_id(service: Service) -> None:
    body = record(collectId="abc-1")
    first = post(service, body)
    second = post(service, body)
    assert first.status_code == 201 and second.status_code == 200
    assert first.json()["data"]["id"] == second.json()["data"]["id"]
    # the same collectId of another user is another record
    other = post(service, body, service.keys.bob)
    assert other.status_code == 201 and other.json()["data"]["id"] != first.json()["data"]["id"]
    batch = post(
        service,
        {"records": [body, record(collectId="abc-2"), record(collectId="abc-2")]},
        path=BATCH,
    )
    result = batch.json()["data"]
    assert result["accepted"] == 1 and result["duplicates"] == 2
    assert result["records"][0]["id"] == first.json()["data"]["id"]
    assert result["records"][1]["id"] == result["records"][2]["id"]
    assert len(get(service, METRICS).json()["data"]["queries"]) == 2


def test_feedback_recomputes_and_switches_the_source(service: Service) -> None:
    r = post(service, record(docs=[doc("a", 0.2), doc("b", 0.1)]))
    rid = r.json()["data"]["id"]
    assert r.json()["data"]["relevantRetrieved"] == 0
    fb = post(service, {"judgments": {"b": 2, "z": 1}}, path=f"{METRICS}/{rid}/feedback")
    data = fb.json()["data"]
    assert fb.status_code == 200
    assert data["judgmentSource"] == "feedback" and data["threshold"] is None
    assert data["relevantRetrieved"] == 1 and data["totalRelevant"] == 2
    assert data["meanReciprocalRank"] == 0.5 and data["judgments"] == {"b": 2, "z": 1}
    assert error_of(post(service, {}, path=f"{METRICS}/{rid}/feedback"), 422)
    assert (
        error_of(
            post(
                service,
                {"relevantDocumentIds": ["a"]},
                service.keys.bob,
                path=f"{METRICS}/{rid}/feedback",
            ),
            404,
        )["code"]
        == "not_found"
    )


def test_errors_are_typed(service: Service) -> None:
    c = service.client
    assert error_of(c.get(METRICS), 401)["code"] == "unauthorized"
    assert error_of(c.get(METRICS, headers={"Authorization": "Bearer nope"}), 401)
    assert error_of(c.get(METRICS, headers={"Authorization": "Basic abc"}), 401)
    assert error_of(c.get(METRICS, headers=bearer("rsk_0000_forged")), 401)
    assert error_of(c.get("/nowhere", headers=bearer(service.keys.alice)), 404)
    assert error_of(c.delete(METRICS, headers=bearer(service.keys.alice)), 405)
    bad = c.post(
        COLLECT,
        content=b'{"query": "x", ',
        headers={**bearer(service.keys.alice), "Content-Type": "application/json"},
    )
    assert "not valid JSON" in error_of(bad, 422)["message"]
    wrong = error_of(
        post(service, {"query": "", "retrievedDocuments": [{"documentId": "a", "score": "high"}]}),
        422,
    )
    paths = {d["path"] for d in wrong["details"]}
    assert {"body.query", "body.retrievedDocuments.0.score"} <= paths
    nan = c.post(
        COLLECT,
        content=b'{"query": "q", "retrievedDocuments": [{"documentId": "a", "score": NaN}]}',
        headers={**bearer(service.keys.alice), "Content-Type": "application/json"},
    )
    assert nan.status_code == 422
    # integers past 64 bits once reached the JSON encoder of the store (a 500)
    huge = {"documentId": "a", "score": 1.0, "chunkIndex": 676878911964664991580160}
    too_big = error_of(post(service, {"query": "q", "retrievedDocuments": [huge]}), 422)
    assert too_big["details"][0]["path"] == "body.retrievedDocuments.0.chunkIndex"
    assert error_of(get(service, f"{METRICS}/not-a-uuid"), 422)
    assert error_of(post(service, record(userId="bob")), 403)["code"] == "forbidden"
    assert error_of(get(service, METRICS, userId="bob"), 403)


def test_paging_bounds_and_dates(service: Service) -> None:
    assert post(service, {"records": [record(str(i)) for i in range(5)]}, path=BATCH)
    page = get(service, METRICS, limit=2, offset=1).json()["data"]
    assert len(page["queries"]) == 2 and page["limit"] == 2 and page["offset"] == 1
    assert get(service, METRICS, limit=1000).status_code == 200
    for params in ({"limit": 1001}, {"limit": 0}, {"offset": -1}, {"limit": "ten"}):
        err = error_of(get(service, METRICS, **params), 422)
        assert err["details"][0]["path"].startswith("query.")
    err = error_of(get(service, METRICS, startDate="yesterday"), 422)
    assert err["details"][0]["path"] == "query.startDate"
    assert error_of(get(service, METRICS, startDate="2024-02-30"), 422)
    # every listing with a date range answers an inverted one alike (alerts had its own copy)
    for path in (METRICS, "/api/events", "/api/alerts"):
        err = error_of(get(service, path, startDate="2024-05-02", endDate="2024-05-01"), 400)
        assert err == {
            "code": "bad_request",
            "message": "startDate is after endDate",
            "details": {
                "startDate": "2024-05-02T00:00:00+00:00",
                "endDate": "2024-05-01T23:59:59.999999+00:00",
            },
        }, path
    ok = get(service, METRICS, startDate="2024-05-01T00:00:00+02:00", endDate="2999-01-01")
    assert ok.status_code == 200 and ok.json()["data"]["totalQueries"] == 5
    # a timestamp before 1970 is refused (test_service_store stores and reads one below 1000)
    err = error_of(post(service, record("old", timestamp="0246-06-02T22:15:13Z")), 422)
    assert err["details"][0]["path"] == "body.timestamp"


INJECTIONS = [
    "'; DROP TABLE retrieval_metrics; --",
    "' OR '1'='1",
    "alice' --",
    '"; DELETE FROM api_keys; --',
    "1; SELECT pg_sleep(1)",
    "\\x00'",
]


@pytest.mark.parametrize("evil", INJECTIONS)
def test_sql_injection_strings_are_data(service: Service, evil: str) -> None:
    body = record(
        evil,
        [doc(evil, 0.9, documentName=evil)],
        queryId=evil,
        collectId=evil,
        relevantDocumentIds=[evil],
        options={"topicId": evil, "arm": evil, "documentIds": [evil]},
    )
    r = post(service, body)
    assert r.status_code == 201, r.text
    assert r.json()["data"]["query"] == evil and r.json()["data"]["precision"] == 1.0
    post(service, record("bob's"), service.keys.bob)
    for name in ("topicId", "searchType", "arm", "userId"):
        params = {name: evil}
        if name == "userId":
            assert get(service, METRICS, **params).status_code == 403
            continue
        listed = get(service, METRICS, **params).json()["data"]
        assert [q["userId"] for q in listed["queries"]] in ([], ["alice"])
    assert get(service, METRICS, startDate=evil).status_code == 422
    everything = get(service, METRICS, service.keys.service).json()["data"]
    assert (
        everything["byJudgmentSource"]["judged"]["count"]
        + everything["byJudgmentSource"]["heuristic"]["count"]
        == 2
    )
    thresholds = service.client.put(
        f"{METRICS}/thresholds",
        json={"thresholds": {evil: 0.5}},
        headers=bearer(service.keys.alice),
    )
    assert thresholds.status_code == 422


def test_body_and_batch_limits(tmp_path: Path) -> None:
    settings = sqlite_settings(
        tmp_path / "m.sqlite",
        max_request_bytes=4096,
        max_batch_records=3,
        max_documents_per_record=2,
    )
    with TestClient(create_app(settings)) as client:
        engine = make_engine(settings.database_url)
        key = create_key(engine, "alice")[0]
        engine.dispose()
        h = bearer(key)
        big = record("x" * 5000)
        err = error_of(client.post(COLLECT, json=big, headers=h), 413)
        assert err["details"] == {"limitBytes": 4096}

        # a chunked body (no Content-Length) is counted while it arrives
        def chunks() -> Any:
            yield b'{"query": "'
            for _ in range(10):
                yield b"y" * 1000
            yield b'", "retrievedDocuments": []}'

        streamed = client.post(
            COLLECT, content=chunks(), headers={**h, "Content-Type": "application/json"}
        )
        error_of(streamed, 413)
        err = error_of(client.post(BATCH, json={"records": [record()] * 4}, headers=h), 413)
        assert err["details"] == {"limitRecords": 3}
        assert err["message"] == "more than 3 records in one batch (max_batch_records)"
        err = error_of(
            client.post(
                BATCH,
                json={"records": [record(), record(docs=[doc("a", 1), doc("b", 1), doc("c", 1)])]},
                headers=h,
            ),
            422,
        )
        assert err["details"][0]["path"] == "body.records.1.retrievedDocuments"
        assert client.post(BATCH, json={"records": [record()] * 3}, headers=h).status_code == 201


def test_rate_limit(tmp_path: Path) -> None:
    settings = sqlite_settings(tmp_path / "m.sqlite", rate_limit_per_second=1)
    with TestClient(create_app(settings)) as client:
        engine = make_engine(settings.database_url)
        key = create_key(engine, "alice")[0]
        engine.dispose()
        statuses = [client.get(METRICS, headers=bearer(key)).status_code for _ in range(5)]
        assert statuses[:2] == [200, 200] and statuses[-1] == 429
        last = client.get(METRICS, headers=bearer(key))
        assert error_of(last, 429)["code"] == "rate_limited"
        assert int(last.headers["Retry-After"]) >= 1


def test_thresholds_per_user_and_search_type(tmp_path: Path) -> None:
    settings = sqlite_settings(tmp_path / "m.sqlite", thresholds={"keyword": 0.95})
    with TestClient(create_app(settings)) as client:
        engine = make_engine(settings.database_url)
        alice, bob = create_key(engine, "alice")[0], create_key(engine, "bob")[0]
        svc = create_key(engine, "svc", "service")[0]
        engine.dispose()
        sem = {"searchTypes": {"semantic": True}}
        kw = {"searchTypes": {"keyword": True}}
        docs = [doc("a", 0.8)]

        def threshold(key: str, options: dict[str, Any]) -> float:
            r = client.post(COLLECT, json=record(docs=docs, options=options), headers=bearer(key))
            return float(r.json()["data"]["threshold"])

        assert threshold(alice, sem) == 0.7 and threshold(alice, kw) == 0.95
        r = client.put(
            f"{METRICS}/thresholds",
            json={"thresholds": {"*": 0.5, "semantic": 0.6}},
            headers=bearer(alice),
        )
        assert r.json()["data"]["own"] == {"*": 0.5, "semantic": 0.6}
        assert threshold(alice, sem) == 0.6 and threshold(alice, kw) == 0.5
        assert threshold(bob, sem) == 0.7  # bob keeps the defaults
        assert (
            client.put(
                f"{METRICS}/thresholds",
                params={"userId": "alice"},
                json={"thresholds": {"*": 0.1}},
                headers=bearer(bob),
            ).status_code
            == 403
        )
        r = client.put(
            f"{METRICS}/thresholds",
            params={"userId": "bob"},
            json={"thresholds": {"semantic": 0.2}},
            headers=bearer(svc),
        )
        assert r.json()["data"]["own"] == {"semantic": 0.2}
        assert threshold(bob, sem) == 0.2
        client.put(
            f"{METRICS}/thresholds", json={"thresholds": {"semantic": None}}, headers=bearer(alice)
        )
        got = client.get(f"{METRICS}/thresholds", headers=bearer(alice)).json()["data"]
        assert got == {"default": 0.7, "bySearchType": {"keyword": 0.95}, "own": {"*": 0.5}}


def test_export_formats(
    service: Service,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    post(
        service,
        record(
            "judged q",
            [doc("a", 0.9, documentName="Doc A"), doc("b", 0.5)],
            relevantDocumentIds=["a"],
            queryId="q7",
        ),
    )
    post(service, record("heuristic q"))
    trec = get(service, f"{METRICS}/export", format="trec", part="qrels")
    assert trec.status_code == 200 and trec.headers["X-Rankscope-Queries"] == "1"
    lines = trec.text.splitlines()
    assert sorted(line.split()[2:] for line in lines) == [["a", "1"], ["b", "0"]]
    run = get(service, f"{METRICS}/export", format="trec", part="run").text.split("\n")[0].split()
    assert run[1:5] == ["Q0", "a", "1", "2"] and run[5] == "collected"
    jsonl = get(service, f"{METRICS}/export", format="jsonl", judgments="heuristic", part="queries")
    (query,) = [json.loads(line) for line in jsonl.text.splitlines()]
    assert query["text"] == "heuristic q" and query["judgment_source"] == "heuristic"
    suite = get(service, f"{METRICS}/export", format="suite")
    assert suite.headers["content-type"] == "application/zip"
    folder = tmp_path / "suite"
    zipfile.ZipFile(io.BytesIO(suite.content)).extractall(folder)
    spec = yaml.safe_load((folder / "suite.yaml").read_text())
    assert spec["engines"][0]["engine"] == "run_file"
    from rankscope.suite import load_suite

    loaded = load_suite(folder / "suite.yaml")
    assert [q.text for q in loaded.queries] == ["judged q"]
    assert loaded.qrels().to_dict() == {str(query_id(get(service, METRICS))): {"a": 1, "b": 0}}
    # rankscope bench runs it (from the unpacked folder: run_file paths are relative to it)
    monkeypatch.chdir(folder)
    assert main(["bench", "suite.yaml", "--out", str(tmp_path / "bench-out"), "--quiet"]) == 0
    assert "collected" in capsys.readouterr().out
    # and rankscope eval reads the JSONL export
    jsonl = get(service, f"{METRICS}/export", format="jsonl")
    zipfile.ZipFile(io.BytesIO(jsonl.content)).extractall(tmp_path / "jsonl")
    qrels, run = tmp_path / "jsonl" / "qrels.jsonl", tmp_path / "jsonl" / "run.jsonl"
    assert main(["eval", str(qrels), str(run), "-m", "mrr", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["mean"]["mrr"] == 1.0


def query_id(response: Any) -> str:
    (judged,) = [
        q for q in response.json()["data"]["queries"] if q["judgmentSource"] != "heuristic"
    ]
    return str(judged["id"])


def test_health_and_openapi(service: Service) -> None:
    assert service.client.get("/healthz").json() == {"success": True, "data": {"status": "ok"}}
    ready = service.client.get("/readyz").json()["data"]
    assert ready["status"] == "ok" and ready["database"] == "sqlite"
    doc_ = service.client.get("/openapi.json").json()
    paths = doc_["paths"]
    for path in (
        COLLECT,
        BATCH,
        METRICS,
        f"{METRICS}/summary",
        f"{METRICS}/timeseries",
        f"{METRICS}/breakdown",
        f"{METRICS}/export",
        f"{METRICS}/{{record_id}}/feedback",
    ):
        assert path in paths
    assert "HTTPValidationError" not in json.dumps(doc_)
    assert service.client.get("/docs").status_code == 200


def test_an_unexpected_error_is_a_typed_500_without_trace(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = service.client.app.state.service  # type: ignore[attr-defined]

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(state.store, "page", broken)
    err = error_of(get(service, METRICS), 500)
    assert err == {
        "code": "internal_error",
        "message": "internal error; the server log has details",
        "details": None,
    }
