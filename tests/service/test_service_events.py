"""POST /api/events: batches, idempotency, validation, users kept apart; the summary; the UBI
importer (library, CLI, and through a live service)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rankscope.cli.app import main
from rankscope.service.ingest.ubi import read_ubi
from serve_helpers import Service, bearer, live_server

pytestmark = pytest.mark.service
EVENTS = "/api/events"
DATA = Path(__file__).with_name("data")


def post(service: Service, body: Any, key: str | None = None) -> Any:
    return service.client.post(EVENTS, json=body, headers=bearer(key or service.keys.alice))


def get(service: Service, path: str, key: str | None = None, **params: Any) -> Any:
    return service.client.get(path, params=params, headers=bearer(key or service.keys.alice))


def page(
    qid: str, docs: list[str], clicked: dict[str, float], **common: Any
) -> list[dict[str, Any]]:
    """The events of one results page: a search, impressions, clicks (with dwell times)."""
    events: list[dict[str, Any]] = [
        {
            "eventId": f"{qid}:s",
            "action": "search",
            "queryId": qid,
            "resultCount": len(docs),
            "query": common.pop("query", "rotate logs"),
            **common,
        }
    ]
    for i, d in enumerate(docs, start=1):
        events.append(
            {
                "eventId": f"{qid}:i{i}",
                "action": "impression",
                "queryId": qid,
                "documentId": d,
                "position": i,
                **common,
            }
        )
        if d in clicked:
            events.append(
                {
                    "eventId": f"{qid}:c{i}",
                    "action": "click",
                    "queryId": qid,
                    "documentId": d,
                    "position": i,
                    "dwellTimeSeconds": clicked[d],
                    **common,
                }
            )
    return events


def test_batch_is_stored_once_and_answers_every_event(service: Service) -> None:
    events = page("s1", ["a", "b", "c"], {"b": 40.0})
    r = post(service, {"events": events})
    assert r.status_code == 201, r.text
    data = r.json()["data"]
    assert (data["accepted"], data["duplicates"]) == (5, 0)
    assert [e["eventId"] for e in data["events"]] == [e["eventId"] for e in events]
    # a retry (as a bare list) stores nothing and returns the stored ids
    again = post(service, events)
    assert again.status_code == 201
    assert again.json()["data"]["duplicates"] == 5
    assert [e["id"] for e in again.json()["data"]["events"]] == [e["id"] for e in data["events"]]
    # the same eventId twice in one batch: the second is the duplicate
    twice = post(
        service, [{"eventId": "x", "action": "thumbs_up", "queryId": "s1", "documentId": "b"}] * 2
    )
    assert [e["duplicate"] for e in twice.json()["data"]["events"]] == [False, True]
    # events without an eventId are all stored
    free = [{"action": "cited", "queryId": "s1", "documentId": "a"}] * 2
    assert post(service, free).json()["data"]["accepted"] == 2
    listed = get(service, EVENTS, queryId="s1", limit=1000).json()["data"]["events"]
    assert len(listed) == 8
    click = next(e for e in listed if e["action"] == "click")
    assert (click["documentId"], click["position"], click["dwellTimeSeconds"]) == ("b", 2, 40.0)


@pytest.mark.parametrize(
    ("event", "path", "message"),
    [
        ({"action": "click", "documentId": "a"}, "body.events.0", "needs queryId"),
        (
            {"action": "impression", "queryId": "q", "documentId": "a"},
            "body.events.0",
            "needs position",
        ),
        ({"action": "click", "queryId": "q"}, "body.events.0", "needs documentId"),
        (
            {"action": "dwell", "queryId": "q", "documentId": "a"},
            "body.events.0",
            "needs dwellTimeSeconds",
        ),
        (
            {"action": "impression", "queryId": "q", "documentId": "a", "position": 0},
            "body.events.0.position",
            "greater than or equal to 1",
        ),
        ({"action": "bad action!", "queryId": "q"}, "body.events.0.action", "pattern"),
        (
            {"action": "click", "queryId": "q", "documentId": "a", "surprise": 1},
            "body.events.0.surprise",
            "Extra inputs",
        ),
    ],
)
def test_invalid_events_name_the_field(
    service: Service, event: dict[str, Any], path: str, message: str
) -> None:
    r = post(service, {"events": [event]})
    assert r.status_code == 422, r.text
    details = r.json()["error"]["details"]
    assert any(d["path"] == path and message in d["message"] for d in details), details
    assert post(service, {"events": []}).status_code == 201


def test_custom_actions_are_stored_and_counted(service: Service) -> None:
    r = post(service, [{"action": "add_to_cart", "documentId": "a"}])
    assert r.status_code == 201
    summary = get(service, f"{EVENTS}/summary").json()["data"]
    assert summary["otherActions"] == {"add_to_cart": 1}


def test_batch_limit(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from rankscope.service.app import create_app
    from serve_helpers import make_keys, sqlite_settings

    settings = sqlite_settings(tmp_path / "m.sqlite", max_batch_events=2)
    keys = make_keys(settings.database_url)
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        body = [{"action": "cited", "queryId": "q", "documentId": "a"}] * 3
        r = client.post(EVENTS, json=body, headers=bearer(keys.alice))
        assert r.status_code == 413 and r.json()["error"]["details"] == {"limitEvents": 2}


def test_users_are_kept_apart_and_the_service_writes_for_them(service: Service) -> None:
    post(service, page("a1", ["x"], {"x": 5.0}))
    post(service, page("b1", ["y", "z"], {}), key=service.keys.bob)
    r = post(
        service,
        [{"action": "thumbs_down", "queryId": "b1", "documentId": "y", "userId": "bob"}],
        key=service.keys.service,
    )
    assert r.status_code == 201
    forbidden = post(
        service, [{"action": "thumbs_up", "queryId": "a1", "documentId": "x", "userId": "bob"}]
    )
    assert forbidden.status_code == 403
    alice = get(service, EVENTS).json()["data"]["events"]
    assert {e["userId"] for e in alice} == {"alice"} and len(alice) == 3
    bob = get(service, f"{EVENTS}/summary", key=service.keys.bob).json()["data"]
    assert (bob["impressions"], bob["clicks"], bob["thumbsDown"]) == (2, 0, 1)
    everyone = get(service, f"{EVENTS}/summary", key=service.keys.service).json()["data"]
    assert everyone["impressions"] == 3
    one = get(service, f"{EVENTS}/summary", key=service.keys.service, userId="bob")
    assert one.json()["data"]["impressions"] == 2
    assert get(service, f"{EVENTS}/summary", userId="bob").status_code == 403


def test_summary_numbers(service: Service) -> None:
    t = "2024-05-01T10:00:00Z"
    events = (
        page("p1", ["a", "b", "c", "d"], {"a": 10.0, "c": 50.0}, timestamp=t, topicId="ops")
        + page("p2", ["a", "b"], {}, timestamp=t, topicId="ops")
        + page("p3", ["e"], {"e": 30.0}, timestamp="2024-05-02T10:00:00Z", topicId="dev", arm="new")
        + [
            {
                "action": "search",
                "queryId": "p4",
                "resultCount": 0,
                "timestamp": t,
                "topicId": "ops",
            }
        ]
    )
    assert post(service, events).status_code == 201
    s = get(service, f"{EVENTS}/summary").json()["data"]
    assert (s["searches"], s["impressions"], s["clicks"]) == (4, 7, 3)
    assert s["clickThroughRate"]["value"] == pytest.approx(3 / 7)
    low, high = s["clickThroughRate"]["low"], s["clickThroughRate"]["high"]
    from scipy.stats import binomtest

    ci = binomtest(3, 7).proportion_ci(0.95, method="wilson")
    assert (low, high) == (pytest.approx(ci.low), pytest.approx(ci.high))
    # query ids with impressions: p1, p2, p3; clicked: p1, p3
    assert s["queryClickRate"]["value"] == pytest.approx(2 / 3)
    assert s["meanClickPosition"] == pytest.approx((1 + 3 + 1) / 3)
    # search events with a result count: p1, p2, p3, p4; zero results: p4
    assert s["zeroResultRate"]["value"] == pytest.approx(1 / 4)
    assert s["meanDwellSeconds"] == pytest.approx(30.0)
    assert s["dateRange"]["start"].startswith("2024-05-01T10:00:00")
    ops = get(service, f"{EVENTS}/summary", topicId="ops", endDate="2024-05-01").json()["data"]
    assert (ops["searches"], ops["impressions"], ops["clicks"]) == (3, 6, 2)
    arm = get(service, f"{EVENTS}/summary", arm="new").json()["data"]
    assert arm["clicks"] == 1 and arm["dateRange"]["end"].startswith("2024-05-02")
    empty = get(service, f"{EVENTS}/summary", topicId="none").json()["data"]
    assert empty["clickThroughRate"] == {
        "value": None,
        "low": None,
        "high": None,
        "numerator": 0,
        "denominator": 0,
    }
    bad = get(service, f"{EVENTS}/summary", startDate="2024-05-03", endDate="2024-05-01")
    assert bad.status_code == 400


def test_summary_names_its_click_positions_and_experiments(service: Service) -> None:
    """The mean click position says how many clicks it averages (a click may come without a
    position), and the interleaving experiments in the selection are listed (the dashboard
    reads both)."""
    t = "2024-05-01T10:00:00Z"
    events = page("p1", ["a", "b", "c"], {"b": 5.0}, timestamp=t, topicId="ops")
    events.append(
        {"action": "click", "queryId": "p1", "documentId": "z", "timestamp": t, "topicId": "ops"}
    )
    for qid, experiment in (("x1", "bm25-vs-dense"), ("x2", "bm25-vs-dense"), ("y1", "ab")):
        for position, team in ((1, "one"), (2, "two")):
            events.append(
                {
                    "action": "impression",
                    "queryId": qid,
                    "documentId": f"d{position}",
                    "position": position,
                    "experiment": experiment,
                    "team": team,
                    "timestamp": t,
                    "topicId": "dev",
                }
            )
    assert post(service, events).status_code == 201
    s = get(service, f"{EVENTS}/summary").json()["data"]
    assert (s["clicks"], s["clicksWithPosition"]) == (2, 1)
    assert s["meanClickPosition"] == 2.0
    assert s["experiments"] == {"ab": 1, "bm25-vs-dense": 2}
    ops = get(service, f"{EVENTS}/summary", topicId="ops").json()["data"]
    assert ops["experiments"] == {} and ops["clicksWithPosition"] == 1
    one = get(service, f"{EVENTS}/summary", experiment="ab").json()["data"]
    assert one["experiments"] == {"ab": 1}


def test_read_ubi_maps_queries_and_events() -> None:
    queries = read_ubi(DATA / "ubi_queries.jsonl")
    assert (queries.queries, len(queries.events)) == (2, 5)
    search = queries.events[0]
    assert (search.action, search.query, search.result_count, search.client_id) == (
        "search",
        "Rotate Logs",
        3,
        "browser-1",
    )
    assert search.attributes == {"query_response_id": "r1", "query_attributes": {"page": 1}}
    shown = [(e.document_id, e.position) for e in queries.events if e.action == "impression"]
    assert shown == [("logging.md", 1), ("cron.md", 2), ("disk.md", 3)]
    assert queries.events[4].event_id == "ubi:os-q2:search"
    assert queries.events[4].result_count == 0
    events = read_ubi(DATA / "ubi_events.jsonl")
    assert events.ubi_events == 6
    got = [(e.action, e.document_id, e.position, e.dwell_time_seconds) for e in events.events]
    assert got == [
        ("click", "cron.md", 2, 45.5),
        ("click", "123", 3, None),
        ("add_to_cart", "cron.md", 2, None),
        ("impression", "z", 1, None),
    ]
    assert events.events[0].attributes is not None
    assert events.events[0].attributes["user_id"] == "end-user-7"  # the end user, kept
    assert events.events[3].event_id == "ubi:os-e9"
    assert sorted(events.skipped) == [
        "invalid click event:  Value error, a 'click' event needs queryId",
        "invalid impression event:  Value error, an 'impression' event needs position (1 = top)",
    ]
    assert read_ubi(DATA / "ubi_events.jsonl", zero_based=True).events[0].position == 3
    only = read_ubi(DATA / "ubi_queries.jsonl", impressions_from_queries=False)
    assert [e.action for e in only.events] == ["search", "search"]


def test_read_ubi_refuses_bad_files(tmp_path: Path) -> None:
    from rankscope.errors import FormatError

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"action_name": "click"}\n{not json\n')
    with pytest.raises(FormatError, match=r"bad.jsonl:2: invalid JSON"):
        read_ubi(bad)
    odd = tmp_path / "odd.jsonl"
    odd.write_text('{"something": 1}\n')
    assert read_ubi(odd).skipped == {
        "neither a UBI query (user_query) nor an event (action_name)": [1]
    }
    array = tmp_path / "array.json"
    array.write_text(
        json.dumps(
            [
                {
                    "action_name": "impression",
                    "query_id": "q",
                    "event_attributes": {"object": {"object_id": "a"}, "position": {"ordinal": 4}},
                }
            ]
        )
    )
    assert read_ubi(array).events[0].position == 4


def test_import_ubi_command_is_idempotent(
    tmp_path: Path, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    url = service.settings.database_url
    for name in ("ubi_queries.jsonl", "ubi_events.jsonl"):
        assert (
            main(
                ["serve", "import-ubi", str(DATA / name), "--user", "alice", "--database-url", url]
            )
            == 0
        )
    out = capsys.readouterr()
    assert "2 UBI queries and 0 UBI events -> 5 events: 5 stored, 0 already stored" in out.out
    assert "skipped 1: invalid click event" in out.err and "(line 6)" in out.err
    assert (
        main(
            [
                "serve",
                "import-ubi",
                str(DATA / "ubi_events.jsonl"),
                "-u",
                "alice",
                "--database-url",
                url,
            ]
        )
        == 0
    )
    assert "0 stored, 4 already stored" in capsys.readouterr().out
    s = get(service, f"{EVENTS}/summary").json()["data"]
    assert (s["searches"], s["impressions"], s["clicks"]) == (2, 4, 2)
    assert s["zeroResultRate"]["value"] == 0.5 and s["meanClickPosition"] == 2.5
    assert s["meanDwellSeconds"] == 45.5 and s["otherActions"] == {"add_to_cart": 1}
    assert (
        main(
            [
                "serve",
                "import-ubi",
                str(tmp_path / "missing.jsonl"),
                "-u",
                "a",
                "--database-url",
                url,
            ]
        )
        == 2
    )
    assert "cannot read the UBI file" in capsys.readouterr().err


def test_import_ubi_through_a_live_service(tmp_path: Path, service: Service) -> None:
    with live_server(service.settings) as url:
        code = main(
            [
                "serve",
                "import-ubi",
                str(DATA / "ubi_queries.jsonl"),
                "--user",
                "bob",
                "--url",
                url,
                "--token",
                service.keys.service,
            ]
        )
        assert code == 0
    bob = get(service, f"{EVENTS}/summary", key=service.keys.bob).json()["data"]
    assert (bob["searches"], bob["impressions"]) == (2, 3)
