"""The client never blocks or raises, batches, retries, drops oldest when full, and after a
server outage every record is stored exactly once."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the service needs: pip install 'rankscope[serve]'")

from rankscope.collect import AsyncMetricsClient, MetricsClient, make_record
from rankscope.engines import Hit
from rankscope.service.store.db import make_engine, migrate
from rankscope.service.store.keys import create_key

pytestmark = pytest.mark.service
DOCS = [{"documentId": "a", "score": 0.9}, {"documentId": "b", "score": 0.2}]


class Scripted(BaseHTTPRequestHandler):
    """Answers batches with the next scripted status (then 201), remembering what came."""

    script: list[int]
    received: list[list[dict[str, Any]]]
    lock: threading.Lock

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        records = body["records"]
        with self.lock:
            status = self.script.pop(0) if self.script else 201
            if status == 422 and len(records) == 1 and records[0]["query"] != "bad":
                status = 201
            if status == 201:
                self.received.append(records)
        data = json.dumps(
            {"success": True, "data": {}} if status == 201 else {"success": False}
        ).encode()
        self.send_response(status)
        if status == 429:
            self.send_header("Retry-After", "0")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def scripted() -> Iterator[tuple[str, type[Scripted]]]:
    handler = type("H", (Scripted,), {"script": [], "received": [], "lock": threading.Lock()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


def fast(url: str, **kw: Any) -> MetricsClient:
    options = {
        "batch_size": 10,
        "flush_interval": 0.05,
        "backoff_base": 0.01,
        "backoff_max": 0.05,
        "timeout": 2.0,
        **kw,
    }
    return MetricsClient(url, "token", **options)


def test_make_record_accepts_hits_tuples_and_mappings() -> None:
    rec = make_record(
        "q",
        [Hit("a", 1.5), ("b", 0.5), {"document_id": "c", "score": 0.1, "chunk_index": 2}],
        relevant_document_ids=["a"],
        search_types=["semantic"],
        topic_id="t",
        arm="B",
        collect_id="x",
    )
    assert rec["retrievedDocuments"] == [
        {"documentId": "a", "score": 1.5},
        {"documentId": "b", "score": 0.5},
        {"documentId": "c", "score": 0.1, "chunkIndex": 2},
    ]
    assert rec["options"]["searchTypes"] == {
        "semantic": True,
        "keyword": False,
        "hybrid": False,
        "web": False,
    }
    assert rec["options"]["arm"] == "B" and rec["collectId"] == "x"


def test_retries_server_errors_and_keeps_collect_ids(scripted: tuple[str, type[Scripted]]) -> None:
    url, handler = scripted
    handler.script[:] = [503, 500, 429]
    client = fast(url)
    for i in range(25):
        client.collect(f"q{i}", DOCS, collect_id=f"c{i}")
    assert client.flush(timeout=10)
    stats = client.close()
    assert stats.sent == 25 and stats.retried == 3 and stats.dropped == 0 and stats.pending == 0
    ids = [r["collectId"] for batch in handler.received for r in batch]
    assert sorted(ids) == sorted(f"c{i}" for i in range(25))


def test_a_rejected_record_does_not_take_the_batch_with_it(
    scripted: tuple[str, type[Scripted]],
) -> None:
    url, handler = scripted
    handler.script[:] = [422] * 50  # the batch, then one by one: only "bad" keeps failing
    client = fast(url, batch_size=5, flush_interval=10)
    for name in ("ok1", "ok2", "bad", "ok3", "ok4"):
        client.collect(name, DOCS)
    assert client.flush(timeout=10)
    stats = client.close()
    assert stats.sent == 4 and stats.rejected == 1
    assert sorted(r["query"] for b in handler.received for r in b) == ["ok1", "ok2", "ok3", "ok4"]


def test_too_large_batches_are_split(scripted: tuple[str, type[Scripted]]) -> None:
    url, handler = scripted
    handler.script[:] = [413, 413]
    client = fast(url, batch_size=8, flush_interval=10)
    for i in range(8):
        client.collect(f"q{i}", DOCS)
    assert client.flush(timeout=10)
    assert client.close().sent == 8
    assert max(len(b) for b in handler.received) == 2


def test_full_queue_drops_the_oldest_and_nothing_raises() -> None:
    # nothing listens on this port; the worker waits (flush_interval) before taking a batch
    client = MetricsClient(
        "http://127.0.0.1:9", "t", batch_size=100, max_queue=5, flush_interval=60
    )
    for i in range(8):
        client.collect(f"q{i}", DOCS)
    client.collect("bad", [{"documentId": "a"}])  # no score
    client.collect("nan", [("a", float("nan"))])
    client.collect("worse", None)
    stats = client.stats()
    assert (stats.collected, stats.dropped, stats.invalid, stats.pending) == (8, 3, 3, 5)
    assert [r["query"] for r in client._buffer.queue] == [f"q{i}" for i in range(3, 8)]
    final = client.close(timeout=0.2)
    assert final.sent == 0 and final.dropped == 8 and final.pending == 0
    client.collect("after close", DOCS)  # still no exception
    assert client.stats().dropped == 9


def _service(tmp_path: Path) -> tuple[str, str]:
    url = f"sqlite:///{tmp_path / 'metrics.sqlite'}"
    engine = make_engine(url)
    migrate(engine)
    key = create_key(engine, "app")[0]
    engine.dispose()
    return url, key


def _stored(db_url: str) -> list[tuple[str, str]]:
    engine = make_engine(db_url)
    with engine.connect() as conn:
        rows = conn.exec_driver_sql("SELECT collect_id, user_id FROM retrieval_metrics").all()
    engine.dispose()
    return [(r[0], r[1]) for r in rows]


def test_async_client(tmp_path: Path) -> None:
    from serve_helpers import live_server, sqlite_settings

    db_url, key = _service(tmp_path)
    settings = sqlite_settings(tmp_path / "metrics.sqlite")

    async def app(url: str) -> Any:
        async with AsyncMetricsClient(url, key, batch_size=7, flush_interval=0.05) as client:
            for i in range(30):
                client.collect(f"q{i}", DOCS, collect_id=f"a{i}")
                await asyncio.sleep(0)
            assert await client.flush(timeout=10)
            return client.stats()

    with live_server(settings) as url:
        stats = asyncio.run(app(url))
    assert stats.sent == 30 and stats.pending == 0
    assert sorted(c for c, _ in _stored(db_url)) == sorted(f"a{i}" for i in range(30))


def test_local_mode_writes_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "local.sqlite"
    with MetricsClient.local(path, user="me", batch_size=4, flush_interval=0.05) as client:
        for i in range(10):
            client.collect(f"q{i}", DOCS, relevant_document_ids=["a"], collect_id=f"l{i % 5}")
        client.collect("", DOCS)  # the service's validation refuses an empty query
        assert client.flush(timeout=10)
    stats = client.stats()
    assert stats.sent == 10 and stats.rejected == 1
    rows = _stored(f"sqlite:///{path}")
    assert sorted(rows) == [(f"l{i}", "me") for i in range(5)]  # idempotent by collectId

    async def use_async() -> Any:
        async with AsyncMetricsClient.local(path, user="me2", flush_interval=0.01) as aclient:
            aclient.collect("q", DOCS)
            await aclient.flush(timeout=10)
            return aclient.stats()

    assert asyncio.run(use_async()).sent == 1


def _start_server(db_url: str, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "RANKSCOPE_SERVE_LOG_LEVEL": "warning"}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rankscope.cli.app",
            "serve",
            "--database-url",
            db_url,
            "--port",
            str(port),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def test_server_killed_mid_traffic(tmp_path: Path) -> None:
    from serve_helpers import free_port, wait_ready

    db_url, key = _service(tmp_path)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = _start_server(db_url, port)
    try:
        wait_ready(url)
        client = MetricsClient(
            url,
            key,
            batch_size=25,
            flush_interval=0.02,
            timeout=2.0,
            backoff_base=0.05,
            backoff_max=0.3,
            max_queue=100_000,
        )
        total, slowest = 3000, 0.0
        served_during_outage = 0
        for i in range(total):
            if i == 1000:
                server.send_signal(signal.SIGKILL)  # mid-traffic, no clean shutdown
                server.wait(timeout=30)
            if i == 2000:
                server = _start_server(db_url, port)
            outage = 1000 <= i < 2000
            start = time.perf_counter()
            client.collect(f"query {i}", DOCS, collect_id=f"k{i}")
            slowest = max(slowest, time.perf_counter() - start)
            served_during_outage += outage
            if i % 50 == 0:
                time.sleep(0.01)  # the application's own work
        wait_ready(url)
        assert client.flush(timeout=120)
        stats = client.close()
    finally:
        server.kill()
        server.wait(timeout=30)
    # the application was never held up: every collect returned while the server was down
    assert served_during_outage == 1000 and slowest < 1.0
    assert stats.retried > 0 and stats.dropped == 0 and stats.rejected == 0
    assert stats.sent == total
    rows = _stored(db_url)
    assert len(rows) == total
    assert sorted(c for c, _ in rows) == sorted(f"k{i}" for i in range(total))  # exactly once
