"""Implicit judgments in the service: the API's click grades equal the library's on the same
log, feedback overrides them, exports judge records by them, the threshold calibration."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import pytest
from online_traffic import Traffic, send, simulate

from rankscope.online.clicks import ClickLog, Feedback, Shown, click_judgments
from rankscope.online.queries import normalise_query, query_key
from rankscope.testing.traffic import Universe
from serve_helpers import Service, bearer

pytestmark = pytest.mark.service
CLICKS = "/api/judgments/clicks"


def get(service: Service, path: str, key: str | None = None, **params: Any) -> Any:
    r = service.client.get(path, params=params, headers=bearer(key or service.keys.alice))
    assert r.status_code == 200, r.text
    return r


@pytest.fixture(scope="module")
def traffic() -> Traffic:
    return simulate(Universe.make(8, 12, seed=5), 400, noise=1.0, seed=6)


def library_log(traffic: Traffic, feedback: dict[tuple[str, str], Feedback]) -> ClickLog:
    rows = []
    for i, (q, ranking, clicked) in enumerate(traffic.sessions):
        dwell = {
            e["documentId"]: e["dwellTimeSeconds"]
            for e in traffic.events
            if e["queryId"] == f"s{i}" and e["action"] == "click"
        }
        for position, doc in enumerate(ranking, start=1):
            rows.append(
                Shown(
                    f"s{i}", normalise_query(q.text), doc, position, doc in clicked, dwell.get(doc)
                )
            )
    return ClickLog.from_shown(rows, feedback)


@pytest.mark.parametrize("model", ["ctr", "coec", "dbn"])
def test_api_grades_equal_the_library_on_the_same_log(
    service: Service, traffic: Traffic, model: str
) -> None:
    send(service.client, service.keys.alice, traffic)
    data = get(service, CLICKS, model=model).json()["data"]
    expected = click_judgments(library_log(traffic, {}), model)  # type: ignore[arg-type]
    assert data["model"] == model and data["judgmentSource"] == f"clicks:{model}"
    assert data["sessions"] == 400 and data["minImpressions"] == 10
    assert data["positionPrior"] == pytest.approx(expected.prior.ctr.tolist())
    got = {(j["query"], j["documentId"]): j for j in data["judgments"]}
    assert len(got) == len(expected.judgments)
    for j in expected.judgments:
        api = got[(j.query, j.doc)]
        assert api["queryKey"] == query_key(j.query)
        assert (api["impressions"], api["clicks"], api["grade"]) == (
            j.impressions,
            j.clicks,
            j.grade,
        )
        assert api["dbn"] == pytest.approx(j.dbn) and api["ctr"] == pytest.approx(j.ctr)
    assert data["graded"] == len(expected.graded()) > 20
    only = get(service, CLICKS, model=model, gradedOnly="true").json()["data"]["judgments"]
    assert all(j["grade"] is not None for j in only) and len(only) == data["graded"]


def test_feedback_and_text_from_records(service: Service) -> None:
    # events without query text take it from the record of the same queryId
    record = {
        "query": "Rotate  LOGS",
        "queryId": "p1",
        "retrievedDocuments": [{"documentId": "a", "score": 0.9}],
    }
    service.client.post(
        "/api/metrics/retrieval/collect", json=record, headers=bearer(service.keys.alice)
    )
    events = [
        {"action": "impression", "queryId": "p1", "documentId": "a", "position": 1},
        {"action": "thumbs_up", "queryId": "p1", "documentId": "a"},
        {"action": "cited", "queryId": "p1", "documentId": "b"},
        {"action": "thumbs_down", "queryId": "p1", "documentId": "c"},
    ]
    assert (
        service.client.post(
            "/api/events", json=events, headers=bearer(service.keys.alice)
        ).status_code
        == 201
    )
    data = get(service, CLICKS).json()["data"]
    grades = {j["documentId"]: (j["query"], j["grade"]) for j in data["judgments"]}
    # a: one impression (no click grade) but a thumbs up -> 2; b: cited -> 1; c: thumbs down -> 0
    assert grades == {"a": ("rotate logs", 2), "b": ("rotate logs", 1), "c": ("rotate logs", 0)}


def test_export_judged_by_clicks(service: Service, traffic: Traffic) -> None:
    send(service.client, service.keys.alice, traffic)
    r = service.client.get(
        "/api/metrics/retrieval/export",
        params={"judgments": "clicks", "format": "jsonl"},
        headers=bearer(service.keys.alice),
    )
    assert r.status_code == 200 and r.headers["x-rankscope-judgments"] == "clicks:dbn"
    files = zipfile.ZipFile(io.BytesIO(r.content))
    queries = [json.loads(x) for x in files.read("queries.jsonl").decode().splitlines()]
    assert {q["judgment_source"] for q in queries} == {"clicks:dbn"}
    graded = {
        (j["queryKey"], j["documentId"]): j["grade"]
        for j in get(service, CLICKS).json()["data"]["judgments"]
        if j["grade"] is not None
    }
    # exactly the records whose query has a click grade
    keys = {k for k, _ in graded}
    assert len(queries) == sum(query_key(q.text) in keys for q, _, _ in traffic.sessions) > 300
    key_of = {q["id"]: q["query_key"] for q in queries}
    qrels = [json.loads(x) for x in files.read("qrels.jsonl").decode().splitlines()]
    assert qrels and all(
        graded[(key_of[x["query_id"]], x["doc_id"])] == x["relevance"] for x in qrels
    )
    # documents without a click grade are unjudged (absent), not 0
    per_query: dict[str, set[str]] = {}
    for x in qrels:
        per_query.setdefault(x["query_id"], set()).add(x["doc_id"])
    one = queries[0]
    assert len(per_query[one["id"]]) == sum(1 for k, _ in graded if k == one["query_key"])
    models = service.client.get(
        "/api/metrics/retrieval/export",
        params={"judgments": "clicks", "clickModel": "ctr", "part": "qrels"},
        headers=bearer(service.keys.alice),
    )
    assert models.headers["x-rankscope-judgments"] == "clicks:ctr"


def test_calibration_against_click_grades(service: Service, traffic: Traffic) -> None:
    send(service.client, service.keys.alice, traffic)
    data = get(service, "/api/judgments/calibration").json()["data"]
    assert data["labels"] == "clicks:dbn" and data["by"] == "searchType"
    (group,) = data["groups"]
    # the records carry no judgments and no search type: heuristic rows at the default 0.7
    assert group["group"] == "none" and group["currentThreshold"] == 0.7
    assert group["pairs"] > 50 and group["kappaBest"] >= group["kappaCurrent"]
    assert 0 < group["bestThreshold"] < 1 and group["applicable"] is True
    by_arm = get(service, "/api/judgments/calibration", by="arm", minGrade=2).json()["data"]
    assert by_arm["groups"][0]["group"] is None and by_arm["groups"][0]["applicable"] is False
