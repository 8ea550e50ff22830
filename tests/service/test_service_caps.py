"""What one stored item may hold and what one read may return, on SQLite and PostgreSQL: an
object of a body holds at most 1,000 keys (refused before validation), an event's attributes
at most max_event_attributes_bytes, and a page of events or records ends at max_page_bytes
whatever its limit (before: one page of 25 events of 8.3 MB attributes was 207 MB)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from serve_helpers import METRICS, PgDatabase, Service, bearer, make_keys, record, sqlite_settings

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from rankscope.service.app import create_app
from rankscope.service.ingest.requests import MAX_OBJECT_KEYS

PAGE_BYTES = 64 * 1024
ATTRIBUTES = 16 * 1024
Backend = Callable[..., Service]


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Service]:
    extra = {"max_page_bytes": PAGE_BYTES}
    if request.param == "sqlite":
        settings = sqlite_settings(tmp_path / "metrics.sqlite", **extra)
        keys = make_keys(settings.database_url)
    else:
        pg: PgDatabase = request.getfixturevalue("pg_database")
        keys = make_keys(pg.admin_dsn)
        settings = pg.settings(**extra)
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        yield Service(client, keys, settings)


def _post(service: Service, path: str, body: bytes) -> tuple[int, dict[str, object]]:
    r = service.client.post(
        path,
        content=body,
        headers={**bearer(service.keys.alice), "Content-Type": "application/json"},
    )
    return r.status_code, r.json()


def _with_keys(head: dict[str, object], n: int) -> bytes:
    """``head`` plus unknown keys up to ``n`` keys in all."""
    body = dict(head)
    for i in range(n - len(head)):
        body[f"x{i}"] = 1
    return json.dumps(body).encode()


def test_an_object_of_too_many_keys_is_refused_naming_the_cap(backend: Service) -> None:
    head = record(collectId="k")
    status, _ = _post(backend, f"{METRICS}/collect", _with_keys(head, MAX_OBJECT_KEYS))
    assert status == 201  # at the cap: unknown keys ignored, as before
    status, body = _post(backend, f"{METRICS}/collect", _with_keys(head, MAX_OBJECT_KEYS + 1))
    assert status == 422
    error = body["error"]
    assert isinstance(error, dict)
    assert error["details"] == [
        {
            "path": "body",
            "message": f"an object may hold at most 1000 keys, not {MAX_OBJECT_KEYS + 1}",
            "type": "too_many_keys",
        }
    ]
    # in a batch's record, a document, and an event
    batch = json.dumps({"records": [json.loads(_with_keys(head, 1001))]}).encode()
    assert (
        _post(backend, f"{METRICS}/collect/batch", batch)[1]["error"]["details"][0][  # type: ignore[index]
            "path"
        ]
        == "body.records.0"
    )
    doc = _with_keys({"documentId": "a", "score": 1.0}, 1001).decode()
    single = f'{{"query": "q", "retrievedDocuments": [{doc}]}}'.encode()
    assert (
        _post(backend, f"{METRICS}/collect", single)[1]["error"]["details"][0][  # type: ignore[index]
            "path"
        ]
        == "body.retrievedDocuments.0"
    )
    event = _with_keys({"action": "search", "queryId": "q"}, 1001).decode()
    status, body = _post(backend, "/api/events", f"[{event}]".encode())
    assert status == 422 and body["error"]["details"][0]["path"] == "body.0"  # type: ignore[index]
    # judgments are capped at 100,000 entries of their own, not at 1,000 keys
    judged = record(judgments={f"d{i}": 1 for i in range(5000)})
    assert _post(backend, f"{METRICS}/collect", json.dumps(judged).encode())[0] == 201


def _attributes(size: int) -> dict[str, str]:
    """Attributes of exactly ``size`` bytes as compact JSON."""
    return {"a": "x" * (size - len('{"a":""}'))}


def test_event_attributes_are_capped(backend: Service) -> None:
    at_cap = {"action": "search", "queryId": "q", "attributes": _attributes(ATTRIBUTES)}
    status, _ = _post(backend, "/api/events", json.dumps([at_cap]).encode())
    assert status == 201
    over = {**at_cap, "attributes": _attributes(ATTRIBUTES + 1)}
    status, body = _post(backend, "/api/events", json.dumps({"events": [at_cap, over]}).encode())
    assert status == 422
    assert body["error"]["details"] == [  # type: ignore[index]
        {
            "path": "body.events.1.attributes",
            "message": "attributes may take at most 16384 bytes as JSON "
            "(max_event_attributes_bytes), not 16385",
            "type": "too_large",
        }
    ]


def _pages(service: Service, path: str, key: str) -> list[list[str]]:
    pages: list[list[str]] = []
    offset = 0
    while True:
        r = service.client.get(
            path, params={"limit": 1000, "offset": offset}, headers=bearer(service.keys.alice)
        )
        assert r.status_code == 200
        # a page is at most max_page_bytes plus one item of the largest size allowed
        assert len(r.content) < PAGE_BYTES + 2 * ATTRIBUTES
        data = r.json()["data"]
        items = [item["id"] for item in data[key]]
        if not items:
            return pages
        pages.append(items)
        assert data["nextOffset"] == offset + len(items)
        assert data["truncated"] is (len(pages) < 4)
        offset = data["nextOffset"]


def test_a_page_of_events_is_bounded_by_bytes(backend: Service) -> None:
    events = [
        {"action": "search", "queryId": f"q{i}", "attributes": _attributes(ATTRIBUTES)}
        for i in range(15)
    ]
    assert _post(backend, "/api/events", json.dumps(events).encode())[0] == 201
    # 15 events of 16 KiB: four pages of 4, 4, 4 and 3 (each stops past 64 KiB)
    pages = _pages(backend, "/api/events", "events")
    assert [len(p) for p in pages] == [4, 4, 4, 3]
    assert len({i for p in pages for i in p}) == 15


def test_a_page_of_records_is_bounded_by_bytes(backend: Service) -> None:
    # documentIds come back in the list: 15 records of ~17 KB each
    ids = [f"doc-{i:05d}" for i in range(1500)]
    batch = {"records": [record(query=f"q{i}", options={"documentIds": ids}) for i in range(15)]}
    assert _post(backend, f"{METRICS}/collect/batch", json.dumps(batch).encode())[0] == 201
    pages = _pages(backend, METRICS, "queries")
    assert [len(p) for p in pages] == [4, 4, 4, 3]
    assert len({i for p in pages for i in p}) == 15
