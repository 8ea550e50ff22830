"""Where the service follows the design a client was written against, and refuses what it
cannot take as meant: totalQueries counts the selection, timestamps are numbers, dateRange is
never null, unknown fields are ignored (and named) by default, numbers are strict, one cap for
judgments, timestamps within a window, bounded pages of click judgments."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from rankscope.service.app import create_app
from serve_helpers import (
    BATCH,
    COLLECT,
    METRICS,
    Service,
    bearer,
    doc,
    make_keys,
    record,
    sqlite_settings,
)

pytestmark = pytest.mark.service


def post(service: Service, body: Any, path: str = COLLECT) -> Any:
    return service.client.post(path, json=body, headers=bearer(service.keys.alice))


def get(service: Service, path: str, **params: Any) -> Any:
    response = service.client.get(path, params=params, headers=bearer(service.keys.alice))
    assert response.status_code == 200, response.text
    return response.json()["data"]


def refused(response: Any, path: str) -> dict[str, Any]:
    """The 422 naming ``path`` first."""
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert error["details"][0]["path"] == path, error
    return error  # type: ignore[no-any-return]


# -- totalQueries ------------------------------------------------------------------------------


def test_total_queries_counts_every_record_a_client_pages_through(service: Service) -> None:
    """61 records, 30 judged: totalQueries once said 30, and a client paging while offset <
    totalQueries stopped after 30 of the 61 the list returns."""
    bodies = []
    for i in range(61):
        body = record(f"q{i}", collectId=f"c{i}")
        if i % 2:  # 30 judged, 31 heuristic
            body["relevantDocumentIds"] = ["a"]
        bodies.append(body)
    assert post(service, {"records": bodies}, BATCH).status_code == 201
    first = get(service, METRICS, limit=7)
    assert first["totalQueries"] == 61
    assert first["judgmentSource"] == "judged"  # the averages stay the judged rows'
    groups = first["byJudgmentSource"]
    assert (groups["judged"]["count"], groups["heuristic"]["count"]) == (30, 31)
    seen: list[str] = []
    offset = 0
    while offset < first["totalQueries"]:
        page = get(service, METRICS, limit=7, offset=offset)
        seen.extend(q["id"] for q in page["queries"])
        offset += 7
    assert len(seen) == len(set(seen)) == 61
    # the summary of six records, three of each kind, says six
    assert get(service, f"{METRICS}/summary", topicId="none")["totalQueries"] == 0
    summary = get(service, f"{METRICS}/summary", judgments="heuristic")
    assert summary["totalQueries"] == 61 and summary["judgmentSource"] == "heuristic"
    assert get(service, METRICS, judgmentSource="judged")["totalQueries"] == 30


def test_summary_of_six_records_says_six(service: Service) -> None:
    bodies = [record(f"q{i}", **({"judgments": {"a": 2}} if i < 3 else {})) for i in range(6)]
    assert post(service, {"records": bodies}, BATCH).status_code == 201
    summary = get(service, f"{METRICS}/summary")
    assert summary["totalQueries"] == 6
    assert summary["byJudgmentSource"]["judged"]["count"] == 3
    assert summary["byJudgmentSource"]["heuristic"]["count"] == 3


# -- timestamps and dateRange ------------------------------------------------------------------


def test_timestamps_are_the_designs_numbers(service: Service) -> None:
    """The design shows "timestamp": 1234567890 in collect and list responses: whole seconds
    since 1970 (UTC). The moment to the microsecond is in timestampIso."""
    made = post(service, record(timestamp="2009-02-13T23:31:30.750001Z"))
    assert made.status_code == 201
    data = made.json()["data"]
    assert data["timestamp"] == 1234567890 and type(data["timestamp"]) is int
    assert data["timestampIso"] == "2009-02-13T23:31:30.750001Z"
    (listed,) = get(service, METRICS)["queries"]
    assert (listed["timestamp"], listed["timestampIso"]) == (1234567890, data["timestampIso"])
    one = get(service, f"{METRICS}/{data['id']}")
    assert (one["timestamp"], one["timestampIso"]) == (1234567890, data["timestampIso"])
    # the number goes back in as well: seconds since 1970
    again = post(service, record(timestamp=1234567890))
    assert again.json()["data"]["timestamp"] == 1234567890
    assert again.json()["data"]["timestampIso"] == "2009-02-13T23:31:30Z"


def test_date_range_is_the_designs_strings_and_never_null(service: Service) -> None:
    empty = get(service, f"{METRICS}/summary")
    start, end = empty["dateRange"]["start"], empty["dateRange"]["end"]
    assert start == end and len(start) == len("2026-01-01T00:00:00.000Z") and end.endswith("Z")
    now = dt.datetime.now(dt.UTC)
    shown = dt.datetime.fromisoformat(start)
    assert abs((shown - now).total_seconds()) < 60  # an empty selection: the request's time
    assert empty["recordRange"] == {"start": None, "end": None}
    for when in ("2026-01-03T04:05:06.789123Z", "2026-01-20T10:00:00Z"):
        assert post(service, record(timestamp=when)).status_code == 201
    summary = get(service, f"{METRICS}/summary")
    # no filter: the stored records' range, to the millisecond (truncated) as the design shows
    assert summary["dateRange"] == {
        "start": "2026-01-03T04:05:06.789Z",
        "end": "2026-01-20T10:00:00.000Z",
    }
    assert summary["recordRange"] == {
        "start": "2026-01-03T04:05:06.789123Z",
        "end": "2026-01-20T10:00:00Z",
    }
    month = get(service, f"{METRICS}/summary", startDate="2026-01-01", endDate="2026-01-31")
    assert month["dateRange"] == {
        "start": "2026-01-01T00:00:00.000Z",
        "end": "2026-01-31T23:59:59.999Z",
    }
    # one side given: the other is the selection's record
    since = get(service, f"{METRICS}/summary", startDate="2026-01-10")
    assert since["dateRange"] == {
        "start": "2026-01-10T00:00:00.000Z",
        "end": "2026-01-20T10:00:00.000Z",
    }


# -- unknown fields ----------------------------------------------------------------------------


def test_unknown_fields_are_ignored_and_named(service: Service) -> None:
    """A client forwarding its documents' metadata got 422: the fields are ignored now, never
    stored, and named in a response header."""
    body = record(
        docs=[doc("a", 0.9, metadata={"source": "wiki"}), doc("b", 0.4)],
        client="web",
        options={"topicId": "t", "région": 1, "searchTypes": {"semantic": True, "vector": True}},
    )
    made = post(service, body)
    assert made.status_code == 201, made.text
    assert made.headers["x-rankscope-ignored-fields"] == (
        "body.retrievedDocuments.0.metadata, body.options.searchTypes.vector, "
        "body.options.r%C3%A9gion, body.client"
    )
    assert made.headers["x-rankscope-ignored-field-count"] == "4"
    stored = get(service, f"{METRICS}/{made.json()['data']['id']}")
    assert stored["rankedList"][0] == {
        "position": 1,
        "documentId": "a",
        "documentName": None,
        "chunkIndex": None,
        "score": 0.9,
    }
    assert stored["topicId"] == "t" and stored["searchType"] == "semantic"
    # a body without unknown fields has no such header
    plain = post(service, record())
    assert "x-rankscope-ignored-fields" not in plain.headers
    # a batch names them by record
    batch = post(service, {"records": [record(), record(extra=1)], "source": "app"}, BATCH)
    assert batch.status_code == 201
    assert batch.headers["x-rankscope-ignored-fields"] == "body.records.1.extra, body.source"
    # an invalid field is still refused, and only it is named
    error = refused(
        post(service, record(docs=[doc("a", "high", metadata=1)])),
        "body.retrievedDocuments.0.score",
    )
    assert [d["path"] for d in error["details"]] == ["body.retrievedDocuments.0.score"]


def test_unknown_fields_are_refused_when_strict(tmp_path: Path) -> None:
    settings = sqlite_settings(tmp_path / "m.sqlite", unknown_fields="reject")
    key = make_keys(settings.database_url).alice
    with TestClient(create_app(settings)) as client:
        body = record(docs=[doc("a", 0.9, metadata={})], client="web")
        error = refused(
            client.post(COLLECT, json=body, headers=bearer(key)),
            "body.retrievedDocuments.0.metadata",
        )
        assert [d["path"] for d in error["details"]] == [
            "body.retrievedDocuments.0.metadata",
            "body.client",
        ]
        assert {d["type"] for d in error["details"]} == {"extra_forbidden"}
        batch = {"records": [record(), record(extra=1)]}
        refused(client.post(BATCH, json=batch, headers=bearer(key)), "body.records.1.extra")
        assert client.post(COLLECT, json=record(), headers=bearer(key)).status_code == 201


# -- strict numbers, one cap, a window for timestamps ------------------------------------------


@pytest.mark.parametrize(
    ("body", "path"),
    [
        (record(docs=[doc("a", "0.9")]), "body.retrievedDocuments.0.score"),
        (record(docs=[doc("a", True)]), "body.retrievedDocuments.0.score"),
        (record(docs=[doc("a", 0.9, chunkIndex="3")]), "body.retrievedDocuments.0.chunkIndex"),
        (record(docs=[doc("a", 0.9, chunkIndex=3.0)]), "body.retrievedDocuments.0.chunkIndex"),
        (record(judgments={"a": "2"}), "body.judgments.a"),
        (record(judgments={"a": True}), "body.judgments.a"),
        (record(judgments={"a": 2.5}), "body.judgments.a"),
        (record(options={"cutoff": "10"}), "body.options.cutoff"),
        (record(options={"webResultsCount": False}), "body.options.webResultsCount"),
        (
            record(options={"searchTypes": {"semantic": "true"}}),
            "body.options.searchTypes.semantic",
        ),
        (record(options={"searchTypes": {"semantic": 1}}), "body.options.searchTypes.semantic"),
    ],
)
def test_numbers_and_flags_are_strict(service: Service, body: Any, path: str) -> None:
    """ "0.9" and true were read as 0.9 and 1.0; a number must be a JSON number now."""
    refused(post(service, body), path)


def test_strict_numbers_still_take_json_numbers(service: Service) -> None:
    made = post(service, record(docs=[doc("a", 1), doc("b", 0)], judgments={"a": 3}))
    assert made.status_code == 201 and made.json()["data"]["maxScore"] == 1.0
    events = [{"action": "impression", "queryId": "q", "documentId": "a", "position": "1"}]
    response = service.client.post("/api/events", json=events, headers=bearer(service.keys.alice))
    refused(response, "body.0.position")
    put = service.client.put(
        "/api/retention", json={"retentionDays": "90"}, headers=bearer(service.keys.alice)
    )
    refused(put, "body.retentionDays")
    put = service.client.put(
        f"{METRICS}/thresholds",
        json={"thresholds": {"*": "0.5"}},
        headers=bearer(service.keys.alice),
    )
    refused(put, "body.thresholds.*")


def test_judgments_and_relevant_ids_share_one_cap(service: Service) -> None:
    """relevantDocumentIds stopped at 100,000 while judgments took 300,000."""
    ids = [f"d{i}" for i in range(100_001)]
    error = refused(post(service, record(judgments=dict.fromkeys(ids, 1))), "body.judgments")
    assert error["details"][0]["type"] == "too_long" and "100000" in error["details"][0]["message"]
    refused(post(service, record(relevantDocumentIds=ids)), "body.relevantDocumentIds")
    made = post(service, record(docs=[doc("d5", 0.9)], judgments=dict.fromkeys(ids[:-1], 1)))
    assert made.status_code == 201 and made.json()["data"]["totalRelevant"] == 100_000
    feedback = f"{METRICS}/{made.json()['data']['id']}/feedback"
    refused(post(service, {"judgments": dict.fromkeys(ids, 1)}, feedback), "body.judgments")
    refused(post(service, {"relevantDocumentIds": ids}, feedback), "body.relevantDocumentIds")


def test_timestamps_lie_in_a_window(service: Service) -> None:
    """Year 1 and year 9999 were stored; now a timestamp lies from 1970-01-01 UTC to a day
    past the server's clock."""
    now = dt.datetime.now(dt.UTC)
    for when in (
        "0001-01-01T00:00:00Z",
        "9999-12-31T23:59:59Z",
        "1969-12-31T23:59:59Z",
        (now + dt.timedelta(days=1, minutes=5)).isoformat(),
    ):
        error = refused(post(service, record(timestamp=when)), "body.timestamp")
        assert error["details"][0]["type"] == "timestamp_out_of_range"
    for when in ("1970-01-01T00:00:00Z", (now + dt.timedelta(hours=23)).isoformat()):
        assert post(service, record(timestamp=when)).status_code == 201, when
    batch = {"records": [record(), record(timestamp="0001-01-01T00:00:00Z")]}
    refused(post(service, batch, BATCH), "body.records.1.timestamp")
    event = {"action": "search", "queryId": "q", "timestamp": "9999-01-01T00:00:00Z"}
    refused(post(service, {"events": [event]}, "/api/events"), "body.events.0.timestamp")
    assert get(service, METRICS)["totalQueries"] == 2  # nothing of the refused bodies stored


def test_click_judgments_pages_are_bounded(service: Service) -> None:
    """limit=100000 and any offset were taken; the documented page is 1 to 1,000."""
    clicks = "/api/judgments/clicks"
    h = bearer(service.keys.alice)
    for params in (
        {"limit": 100_000},
        {"limit": 1001},
        {"limit": 0},
        {"offset": -1},
        {"offset": 10**12},
    ):
        response = service.client.get(clicks, params=params, headers=h)
        assert response.status_code == 422, (params, response.text)
        assert response.json()["error"]["details"][0]["path"].startswith("query.")
    assert service.client.get(clicks, params={"limit": 1000}, headers=h).status_code == 200
