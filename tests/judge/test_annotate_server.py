"""The annotation server's JSON API on 127.0.0.1: the token, the flow of grades, skips, notes
and undos, labels hidden or shown after an answer, and hostile requests answered with clear
4xx JSON errors, never a 500."""

from __future__ import annotations

import json
import socket
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from annotate_helpers import TOKEN, hostile_strings, new_store

from rankscope.errors import InputError
from rankscope.judge.annotate.scale import template_scale
from rankscope.judge.annotate.server import (
    CSP,
    MAX_BODY,
    STATIC,
    AnnotationServer,
    ServerConfig,
)
from rankscope.judge.annotate.store import AnnotationStore

AUTH = {"Authorization": f"Bearer {TOKEN}"}


class Live:
    def __init__(self, server: AnnotationServer, store: AnnotationStore) -> None:
        self.server = server
        self.store = store
        self.url = server.base_url
        self.client = httpx.Client(base_url=self.url, headers=AUTH, timeout=30)

    def post(self, path: str, body: Any) -> httpx.Response:
        return self.client.post(path, json=body)

    def raw_post(self, path: str, content: bytes, **headers: str) -> httpx.Response:
        sent = {"Content-Type": "application/json", **headers}
        return self.client.post(path, content=content, headers=sent)

    def data(self, response: httpx.Response) -> Any:
        assert response.status_code == 200, response.text
        payload = response.json()
        assert payload["success"] is True
        return payload["data"]


def start(tmp_path: Path, show: str = "never", annotators: list[str] | None = None) -> Live:
    store = new_store(tmp_path / "a.sqlite", annotators=annotators, overlap=1.0)
    store.set_references("llm", {("q1", "q1d1"): 3, ("q1", "q1d2"): 0})
    config = ServerConfig(token=TOKEN, scale=template_scale(), show_labels=show)  # type: ignore[arg-type]
    return Live(AnnotationServer(store, config).start(), store)


@pytest.fixture
def live(tmp_path: Path) -> Iterator[Live]:
    running = start(tmp_path)
    try:
        yield running
    finally:
        running.client.close()
        running.server.stop()
        running.store.close()


def error_of(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    payload = response.json()
    assert payload["success"] is False and payload["error"]["code"] == code, payload
    message: str = payload["error"]["message"]
    return message


def test_every_api_call_needs_the_token(live: Live) -> None:
    for path in ("/api/session", "/api/next?annotator=alice", "/api/agreement", "/api/export"):
        error_of(httpx.get(live.url + path), 401, "unauthorized")
        wrong = {"Authorization": "Bearer " + TOKEN[:-1] + "x"}
        response = httpx.get(live.url + path, headers=wrong)
        assert "token" in error_of(response, 401, "unauthorized")
        assert response.headers["www-authenticate"] == "Bearer"
    response = httpx.post(live.url + "/api/grade", json={"annotator": "a", "pairId": 1, "grade": 1})
    error_of(response, 401, "unauthorized")
    assert live.store.log() == []
    # the page itself holds no data and loads without it
    page = httpx.get(live.url + "/")
    assert page.status_code == 200 and page.headers["content-security-policy"] == CSP
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["referrer-policy"] == "no-referrer"
    assert '<script type="module" src="/static/annotate.js">' in page.text
    for name in ("annotate.js", "annotate.css", "favicon.svg"):
        assert httpx.get(f"{live.url}/static/{name}").status_code == 200


def test_only_loopback_host_names_are_answered(live: Live) -> None:
    """A page on another site whose name resolves to 127.0.0.1 (DNS rebinding) is refused."""
    port = live.server.port
    for host in (f"evil.example:{port}", "127.0.0.1", f"127.0.0.1:{port + 1}", ""):
        response = httpx.get(live.url + "/api/session", headers={**AUTH, "Host": host})
        error_of(response, 421, "misdirected_request")
    for host in (f"localhost:{port}", f"127.0.0.1:{port}"):
        assert httpx.get(live.url + "/api/session", headers={**AUTH, "Host": host}).is_success


def test_a_short_or_malformed_token_is_refused_at_start(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a.sqlite")
    for token in ("short", "x" * 15, "has space in it 123", "é" * 20):
        with pytest.raises(InputError, match="16-128 letters"):
            AnnotationServer(store, ServerConfig(token=token, scale=template_scale()))


def test_judging_flow(live: Live) -> None:
    session = live.data(live.client.get("/api/session"))
    assert session["open"] is True and session["pairs"] == 12 and session["showLabels"] == "never"
    assert [lv["grade"] for lv in session["scale"]] == [3, 2, 1, 0]
    joined = live.data(live.post("/api/annotators", {"annotator": "alice"}))
    item = joined["item"]
    assert (item["pairId"], item["queryId"], item["docId"], item["position"]) == (
        1,
        "q1",
        "q1d1",
        1,
    )
    assert "".join(s for s, _ in item["text"]) == live.store.pair(1).text
    assert [s for s, marked in item["text"] if marked] == ["query", "tumors", "cancer"]
    assert "llm" not in json.dumps(joined)  # no label before the answer
    graded = live.data(live.post("/api/grade", {"annotator": "alice", "pairId": 1, "grade": 2,
                                                "elapsedMs": 1234}))  # fmt: skip
    assert graded["saved"]["grade"] == 2 and graded["reference"] is None  # hidden: the default
    assert graded["item"]["pairId"] == 2 and graded["progress"]["graded"] == 1
    skipped = live.data(live.post("/api/skip", {"annotator": "alice", "pairId": 2}))
    assert skipped["item"]["pairId"] == 3 and skipped["progress"]["skipped"] == 1
    live.data(live.post("/api/note", {"annotator": "alice", "pairId": 3, "note": "unsure"}))
    undone = live.data(live.post("/api/undo", {"annotator": "alice"}))
    assert undone["undone"]["pairId"] == 2 and undone["undone"]["kind"] == "skip"
    assert undone["item"]["pairId"] == 2
    again = live.data(live.client.get("/api/next", params={"annotator": "alice"}))
    assert again == {"item": undone["item"], "progress": undone["progress"]}
    (row,) = [a for a in live.store.log() if a.kind == "grade"]
    assert row.elapsed_ms == 1234
    assert live.store.notes("alice") == {3: "unsure"}
    exported = live.data(live.client.get("/api/export", params={"format": "qrels"}))
    assert exported["text"] == "q1 0 q1d1 2\n" and exported["rows"] == 1
    assert exported["filename"] == "annotations.qrels"


def test_labels_are_shown_only_after_an_answer(tmp_path: Path) -> None:
    live = start(tmp_path, show="after")
    try:
        joined = live.data(live.post("/api/annotators", {"annotator": "alice"}))
        assert "reference" not in joined and "llm" not in json.dumps(joined["item"])
        graded = live.data(live.post("/api/grade", {"annotator": "alice", "pairId": 1, "grade": 2}))
        assert graded["reference"] == {"llm": 3}
        assert "llm" not in json.dumps(graded["item"])  # the next pair's label stays hidden
        graded = live.data(live.post("/api/grade", {"annotator": "alice", "pairId": 3, "grade": 2}))
        assert graded["reference"] is None  # no label for this pair
    finally:
        live.server.stop()
        live.store.close()


def test_two_annotators_agreement_and_disagreements(tmp_path: Path) -> None:
    live = start(tmp_path, annotators=["alice", "bob"])
    try:
        for name, grades in (("alice", [0, 1, 2, 3]), ("bob", [0, 1, 3, 3])):
            live.data(live.post("/api/annotators", {"annotator": name}))
            for pair, grade in enumerate(grades, 1):
                live.data(
                    live.post("/api/grade", {"annotator": name, "pairId": pair, "grade": grade})
                )
        report = live.data(live.client.get("/api/agreement"))
        (pair,) = report["annotators"]
        assert (pair["a"], pair["b"], pair["shared"], pair["exact"]) == ("alice", "bob", 4, 0.75)
        assert [d["docId"] for d in report["disagreements"]] == ["q1d3"]
        assert report["disagreements"][0]["references"] is None  # labels hidden on this page
        error_of(live.post("/api/annotators", {"annotator": "carol"}), 404, "unknown_annotator")
        mine = live.data(live.client.get("/api/export", params={"annotator": "bob"}))
        assert mine["text"] == "q1 0 q1d1 0\nq1 0 q1d2 1\nq1 0 q1d3 3\nq1 0 q1d4 3\n"
        response = live.client.get("/api/export", params={"disagreements": "error"})
        assert "graded differently" in error_of(response, 422, "validation_error")
    finally:
        live.server.stop()
        live.store.close()


# -- hostile requests -------------------------------------------------------------------------


def test_bad_grades_and_pair_ids(live: Live) -> None:
    live.data(live.post("/api/annotators", {"annotator": "alice"}))
    base: dict[str, object] = {"annotator": "alice", "pairId": 1}
    grades: tuple[object, ...] = (-1, 4, 2.5, 2.0, "2", True, None, [], {}, 10**30)
    for grade in grades:
        error_of(live.post("/api/grade", {**base, "grade": grade}), 422, "validation_error")
    for raw in (b"1e309", b"NaN", b"Infinity", b"-Infinity"):
        body = b'{"annotator": "alice", "pairId": 1, "grade": ' + raw + b"}"
        response = live.raw_post("/api/grade", body)
        assert response.status_code in (400, 422), raw
    for pair in (0, -1, 13, 999, 2**63, 2**80):
        error_of(live.post("/api/grade", {**base, "pairId": pair, "grade": 1}), 404, "unknown_pair")
    not_ids: tuple[object, ...] = ("1", 1.0, None, True, [1])
    for not_id in not_ids:
        response = live.post("/api/grade", {**base, "pairId": not_id, "grade": 1})
        error_of(response, 422, "validation_error")
    for elapsed in (-5, 1.5, "9", 10**12):
        response = live.post("/api/grade", {**base, "grade": 1, "elapsedMs": elapsed})
        error_of(response, 422, "validation_error")
    error_of(live.post("/api/grade", {**base}), 422, "validation_error")  # no grade
    message = error_of(
        live.post("/api/grade", {**base, "grade": 1, "x": 1}), 422, "validation_error"
    )
    assert "unknown field(s): x" in message
    error_of(live.post("/api/grade", {"annotator": "zed", "pairId": 1, "grade": 1}), 404,
             "unknown_annotator")  # fmt: skip
    assert live.store.log() == []  # nothing bad was written


def test_malformed_bodies(live: Live) -> None:
    cases: list[tuple[bytes, dict[str, str], int, str]] = [
        (b"{", {}, 400, "invalid_json"),
        (b"", {}, 400, "invalid_json"),
        (b"\xff\xfe{}", {}, 400, "invalid_json"),
        (b'"\xed\xa0\x80"', {}, 400, "invalid_json"),  # a surrogate encoded in UTF-8 bytes
        (b"[1, 2]", {}, 422, "validation_error"),
        (b"null", {}, 422, "validation_error"),
        (b"[" * 50_000 + b"]" * 50_000, {}, 413, "payload_too_large"),
        (b"[" * 30_000 + b"]" * 30_000, {}, 400, "invalid_json"),  # too deep
        (b'{"annotator": "alice"}', {"Content-Type": "text/plain"}, 415, "unsupported_media_type"),
        (b'{"annotator": "alice"}', {"Content-Type": "application/x-www-form-urlencoded"}, 415,
         "unsupported_media_type"),
    ]  # fmt: skip
    for body, headers, status, code in cases:
        error_of(live.raw_post("/api/undo", body, **headers), status, code)


def test_nul_and_lone_surrogates_are_refused(live: Live) -> None:
    live.data(live.post("/api/annotators", {"annotator": "alice"}))
    for text in ("a\x00b", "\ud800", "x \udc00 y"):
        # ensure_ascii: the JSON text carries \\ud800 as an escape, as a hostile client sends it
        for body in (
            {"annotator": "alice", "pairId": 1, "note": text},
            {"annotator": text, "pairId": 1, "grade": 1},
            {"annotator": "alice", "pairId": 1, "grade": 1, text: 1},
        ):
            path = "/api/note" if "note" in body else "/api/grade"
            response = live.raw_post(path, json.dumps(body, ensure_ascii=True).encode())
            error_of(response, 422, "validation_error")
    for query in ("annotator=a%00b", "annotator=%ed%a0%80", "annotator=%ff"):
        response = live.client.get("/api/next?" + query)
        assert response.status_code in (400, 422), query
        assert response.json()["success"] is False
    assert live.store.log() == []


def test_huge_bodies_are_refused_without_reading_them(live: Live) -> None:
    for size in (MAX_BODY + 1, 8 * 1024 * 1024):
        response = live.raw_post("/api/note", b"x" * size)
        message = error_of(response, 413, "payload_too_large")
        assert "65536" in message
        assert response.json()["error"]["details"] == {"limit": MAX_BODY, "length": size}
    # a false Content-Length larger than the limit, and a negative or broken one
    for length, status in (("99999999999", 413), ("-1", 400), ("1e3", 400), ("12 34", 400)):
        reply = raw_request(
            live, f"POST /api/undo HTTP/1.1\r\nHost: 127.0.0.1:{live.server.port}\r\n"
            f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\n\r\n{{}}"
        )  # fmt: skip
        assert reply.startswith(f"HTTP/1.0 {status} "), (length, reply[:80])


def raw_request(live: Live, text: str | bytes) -> str:
    """Send bytes as they are (what httpx would refuse to send) and read the whole answer."""
    with socket.create_connection(("127.0.0.1", live.server.port), timeout=30) as sock:
        sock.sendall(text.encode("latin-1") if isinstance(text, str) else text)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks).decode("latin-1")


def body_of(reply: str) -> Any:
    return json.loads(reply.split("\r\n\r\n", 1)[1])


def test_broken_http_gets_json_errors(live: Live) -> None:
    port = live.server.port
    host = f"Host: 127.0.0.1:{port}\r\n"
    auth = f"Authorization: Bearer {TOKEN}\r\n"
    cases = [
        (f"POST /api/undo HTTP/1.1\r\n{host}{auth}Content-Type: application/json\r\n\r\n", 411),
        (f"POST /api/undo HTTP/1.1\r\n{host}{auth}Content-Type: application/json\r\n"
         "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 411),
        ("GARBAGE\r\n\r\n", 400),
        (f"GET /{'a' * 70_000} HTTP/1.1\r\n{host}\r\n", 414),
        (f"GET / HTTP/1.1\r\n{host}" + "X-A: b\r\n" * 120 + "\r\n", 431),
        (f"BREW /api/session HTTP/1.1\r\n{host}{auth}\r\n", 405),
        (f"GET /api/session HTTP/2.0\r\n{host}{auth}\r\n", 400),
        (f"GET /api/session HTTP/9\r\n{host}{auth}\r\n", 400),
        (f"DELETE /api/session HTTP/1.1\r\n{host}{auth}\r\n", 405),
        (f"POST /api/session HTTP/1.1\r\n{host}{auth}Content-Length: 0\r\n\r\n", 405),
        (f"POST / HTTP/1.1\r\n{host}Content-Length: 0\r\n\r\n", 405),
        (f"GET /api/nothing HTTP/1.1\r\n{host}{auth}\r\n", 404),
        (f"GET /static/../store.py HTTP/1.1\r\n{host}\r\n", 404),
        (f"GET /static/%2e%2e/store.py HTTP/1.1\r\n{host}\r\n", 404),
        (f"GET /api/export?format=xml HTTP/1.1\r\n{host}{auth}\r\n", 422),
        (f"GET /api/export?format=csv&format=csv HTTP/1.1\r\n{host}{auth}\r\n", 422),
        (f"GET /api/agreement?threshold=-1 HTTP/1.1\r\n{host}{auth}\r\n", 422),
        (f"GET /api/next HTTP/1.1\r\n{host}{auth}\r\n", 422),
        (f"GET /api/next?{'&'.join(f'k{i}=1' for i in range(40))} HTTP/1.1\r\n{host}{auth}\r\n",
         400),
    ]  # fmt: skip
    for text, status in cases:
        reply = raw_request(live, text)
        assert reply.startswith(f"HTTP/1.0 {status} "), (text[:60], reply[:200])
        payload = body_of(reply)
        assert payload["success"] is False and payload["error"]["code"], text[:60]
        assert "Traceback" not in reply


def test_hostile_strings_everywhere_never_a_5xx(live: Live) -> None:
    """Every shared hostile string as an annotator name, a note, a pair id, a query parameter
    and a field name: an answer (for a valid name or note) or a 4xx JSON error, in bounded
    time; the server stays up and the store consistent."""
    live.data(live.post("/api/annotators", {"annotator": "alice"}))
    statuses: dict[int, int] = {}
    started = time.monotonic()
    for name, text in hostile_strings():
        probes = [
            ("POST", "/api/annotators", {"annotator": text}),
            ("POST", "/api/note", {"annotator": "alice", "pairId": 1, "note": text}),
            ("POST", "/api/grade", {"annotator": "alice", "pairId": text, "grade": 1}),
            ("POST", "/api/grade", {"annotator": "alice", "pairId": 1, "grade": text}),
            ("POST", "/api/undo", {"annotator": text}),
            ("POST", "/api/skip", {"annotator": "alice", "pairId": 1, text: 1}),
            ("GET", "/api/next", {"annotator": text}),
            ("GET", "/api/export", {"format": text}),
            ("GET", "/api/export", {"annotator": text}),
            ("GET", "/api/agreement", {"threshold": text}),
        ]
        for method, path, body in probes:
            if method == "POST":
                response = live.raw_post(path, json.dumps(body, ensure_ascii=True).encode())
            else:
                params = {k: v.encode("utf-8", "surrogatepass") for k, v in body.items()}
                response = live.client.get(path, params=params)  # type: ignore[arg-type]
            assert response.status_code < 500, (name, path, response.text[:200])
            payload = response.json()
            assert payload["success"] is (response.status_code == 200), (name, path)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
    assert time.monotonic() - started < 60
    assert set(statuses) <= {200, 400, 404, 422}
    assert statuses[422] > 100
    notes = {a.note for a in live.store.log() if a.kind == "note" and a.note is not None}
    assert '<img src=x onerror="alert(1)"><script>alert(2)</script>' in notes
    assert not any("\x00" in n for n in notes)


def test_wheel_ships_the_page(tmp_path: Path) -> None:
    wheel = pytest.importorskip("hatchling.builders.wheel", reason="pip install hatchling")
    root = Path(__file__).resolve().parents[2]
    built = list(
        wheel.WheelBuilder(str(root)).build(directory=str(tmp_path), versions=["standard"])
    )
    names = set(zipfile.ZipFile(built[0]).namelist())
    files = [p for p in STATIC.iterdir() if p.is_file()]
    assert {p.name for p in files} == {"index.html", "annotate.js", "annotate.css", "favicon.svg"}
    for path in files:
        assert f"rankscope/judge/annotate/static/{path.name}" in names
