"""A record the server fails on (500) is isolated and dropped alone: the records around it are
sent; answers that say the server is away (502, 503, 504) are retried without dropping."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

pytest.importorskip("httpx")

from rankscope.collect import AsyncMetricsClient, MetricsClient

DOCS = [{"documentId": "a", "score": 0.9}]
QUERIES = ["good-0", "poison", *(f"good-{i}" for i in range(1, 51))]


@dataclass
class Log:
    """What the server saw: the queries it stored, every batch's size, and its script."""

    stored: list[str] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    poison_alone: int = 0
    busy: int = 0  # answer 503 to this many requests first
    lock: threading.Lock = field(default_factory=threading.Lock)


def _handler(log: Log) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        """A real HTTP server that cannot store the record whose query is "poison": any batch
        holding it answers 500 (as a database error would), the others are stored."""

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            records = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["records"]
            queries = [r["query"] for r in records]
            with log.lock:
                log.sizes.append(len(records))
                if log.busy > 0:
                    log.busy -= 1
                    status = 503
                elif "poison" in queries:
                    status = 500
                    log.poison_alone += queries == ["poison"]
                else:
                    status = 201
                    log.stored.extend(queries)
            body = json.dumps(
                {"success": True, "data": {}} if status == 201 else {"success": False}
            ).encode()
            self.send_response(status)
            if status == 503:
                self.send_header("Retry-After", "0")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


@pytest.fixture
def server() -> Iterator[tuple[str, Log]]:
    log = Log()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(log))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", log
    finally:
        httpd.shutdown()
        httpd.server_close()


FAST: dict[str, Any] = {
    "flush_interval": 0.05,
    "backoff_base": 0.002,
    "backoff_max": 0.02,
    "timeout": 5.0,
    "close_timeout": 1.0,
}


def test_one_record_the_server_fails_on_is_dropped_alone(server: tuple[str, Log]) -> None:
    url, log = server
    client = MetricsClient(url, "t", batch_size=100, **FAST)
    for query in QUERIES:
        client.collect(query, DOCS)
    assert client.flush(timeout=30)
    stats = client.close()
    # before: the batch was retried forever, and close() dropped all 52
    assert (stats.sent, stats.rejected, stats.dropped, stats.pending) == (51, 1, 0, 0)
    assert sorted(log.stored) == sorted(q for q in QUERIES if q != "poison")
    assert len(log.stored) == 51  # each good record stored once
    assert log.poison_alone == 3  # max_server_errors answers to the record alone
    # halves: 52 -> 26 -> 13 -> 6 -> 3 -> 1 + 2 -> 1 + 1 (then what was left, in its parts)
    assert log.sizes[:3] == [52, 52, 52] and log.sizes[3:6] == [26, 26, 26]


def test_the_async_client_isolates_it_too(server: tuple[str, Log]) -> None:
    url, log = server

    async def run() -> Any:
        client = AsyncMetricsClient(url, "t", batch_size=100, max_server_errors=2, **FAST)
        for query in QUERIES:
            client.collect(query, DOCS)
        assert await client.flush(timeout=30)
        return await client.aclose()

    stats = asyncio.run(run())
    assert (stats.sent, stats.rejected, stats.dropped, stats.pending) == (51, 1, 0, 0)
    assert sorted(log.stored) == sorted(q for q in QUERIES if q != "poison")
    assert log.poison_alone == 2


def test_a_busy_server_loses_nothing(server: tuple[str, Log]) -> None:
    # 503 says the server is away, not that it failed on the records: no splitting, no drop
    url, log = server
    log.busy = 12
    client = MetricsClient(url, "t", batch_size=100, max_server_errors=2, **FAST)
    for i in range(20):
        client.collect(f"good-{i}", DOCS)
    assert client.flush(timeout=30)
    stats = client.close()
    assert (stats.sent, stats.rejected, stats.dropped, stats.retried) == (20, 0, 0, 12)
    assert log.sizes == [20] * 13


# -- answers that are not about the records: keep them ----------------------------------------


@dataclass
class Gate:
    """A server behind a gate: the first ``closed`` requests get ``answer`` (status, content
    type, body) and store nothing; the rest are stored and answered as the service does."""

    answer: tuple[int, str, bytes]
    closed: int
    requests: int = 0
    sizes: list[int] = field(default_factory=list)
    stored: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _gate_handler(gate: Gate) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            records = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["records"]
            with gate.lock:
                gate.requests += 1
                gate.sizes.append(len(records))
                if gate.requests <= gate.closed:
                    status, media, body = gate.answer
                else:
                    gate.stored.extend(r["query"] for r in records)
                    status, media = 201, "application/json"
                    body = json.dumps(
                        {"success": True, "data": {"accepted": len(records), "records": []}}
                    ).encode()
            self.send_response(status)
            if 300 <= status < 400:
                self.send_header("Location", "https://elsewhere.example/api")
            self.send_header("Content-Type", media)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


@contextlib.contextmanager
def _gated(gate: Gate) -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _gate_handler(gate))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


UNAUTHORIZED = (
    401,
    "application/json",
    b'{"success": false, "error": {"code": "unauthorized", "message": "bad token"}}',
)
REDIRECT = (302, "text/html", b"<a href='https://elsewhere.example/api'>moved</a>")
PROXY_PAGE = (200, "text/html", b"<html><body>Sign in to the corporate proxy</body></html>")
OK_NOT_ENVELOPE = (200, "application/json", b'{"status": "ok"}')


@pytest.mark.parametrize(
    "answer",
    [UNAUTHORIZED, REDIRECT, PROXY_PAGE, OK_NOT_ENVELOPE],
    ids=["401", "302", "200-html", "200-other-json"],
)
def test_answers_not_about_the_records_keep_them(
    answer: tuple[int, str, bytes], caplog: pytest.LogCaptureFixture
) -> None:
    # before: a 401 or a 302 split the batch and rejected every record alone (300 records,
    # 303 requests, 300 lost); a 200 that was not the service's counted all as sent
    gate = Gate(answer, closed=6)
    with _gated(gate) as url, caplog.at_level(logging.WARNING, "rankscope.collect"):
        client = MetricsClient(url, "t", batch_size=100, **FAST)
        for i in range(300):
            client.collect(f"q-{i}", DOCS)
        assert client.flush(timeout=30)
        stats = client.close()
    assert (stats.sent, stats.rejected, stats.dropped, stats.pending) == (300, 0, 0, 0)
    assert sorted(gate.stored) == sorted(f"q-{i}" for i in range(300))
    assert gate.sizes[:6] == [100] * 6  # the batch is held whole, never split
    assert stats.retried == 6
    said = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(said) == 1  # once, loudly, saying why
    assert f"HTTP {answer[0]}" in said[0].getMessage()


def test_the_async_client_keeps_them_too() -> None:
    gate = Gate(UNAUTHORIZED, closed=3)

    async def run(url: str) -> Any:
        client = AsyncMetricsClient(url, "t", batch_size=50, **FAST)
        for i in range(50):
            client.collect(f"q-{i}", DOCS)
        assert await client.flush(timeout=30)
        return await client.aclose()

    with _gated(gate) as url:
        stats = asyncio.run(run(url))
    assert (stats.sent, stats.rejected, stats.dropped) == (50, 0, 0)
    assert len(gate.stored) == 50 and gate.sizes[:3] == [50, 50, 50]


def test_a_proxy_page_is_not_counted_as_stored() -> None:
    # a gate that never opens: nothing is stored, so nothing may count as sent
    gate = Gate(PROXY_PAGE, closed=10**9)
    with _gated(gate) as url:
        client = MetricsClient(url, "t", batch_size=50, **FAST)
        for i in range(50):
            client.collect(f"q-{i}", DOCS)
        assert not client.flush(timeout=0.5)
        stats = client.close(timeout=0.1)
    assert (stats.sent, stats.rejected, stats.dropped) == (0, 0, 50)
    assert gate.stored == []
