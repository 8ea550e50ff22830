"""Batch requests stored by a pool of bulk processes (``bulk_processes``) answer and store
exactly what the in-process path does, errors included, and survive a process that dies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from rankscope.service.app import create_app
from rankscope.service.store.db import make_engine
from rankscope.service.store.models import metrics_table
from rankscope.util.proc import children as proc_children
from rankscope.util.proc import running
from serve_helpers import (
    BATCH,
    Keys,
    bearer,
    doc,
    free_port,
    make_keys,
    record,
    sqlite_settings,
    wait_ready,
)

# every column but the ones a write sets itself
SKIP = {"id", "created_at", "updated_at"}


def records() -> list[dict[str, Any]]:
    stamp = "2026-05-01T12:00:00Z"
    return [
        record("judged", relevantDocumentIds=["a", "z"], timestamp=stamp, collectId="c-1"),
        record("heuristic", timestamp=stamp, options={"searchTypes": {"semantic": True}}),
        record(
            "graded",
            docs=[doc("a", 0.2, chunkIndex=0), doc("a", 0.8, chunkIndex=1), doc("b", 0.5)],
            judgments={"a": 2, "c": 1},
            timestamp=stamp,
            options={"topicId": "t", "cutoff": 1, "webResultsCount": 3},
        ),
        record("mine", userId="bob", timestamp=stamp),
    ]


def stored(database_url: str) -> list[dict[str, Any]]:
    engine = make_engine(database_url, pool_size=1)
    try:
        with engine.connect() as conn:
            rows = conn.execute(select(metrics_table).order_by(metrics_table.c.query))
            return [{k: v for k, v in r._mapping.items() if k not in SKIP} for r in rows]
    finally:
        engine.dispose()


@pytest.fixture
def pooled(tmp_path: Path) -> Iterator[tuple[TestClient, Keys, str]]:
    settings = sqlite_settings(tmp_path / "pooled.sqlite", bulk_processes=2)
    keys = make_keys(settings.database_url)
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        yield client, keys, settings.database_url


def test_processes_store_and_answer_what_the_thread_does(
    pooled: tuple[TestClient, Keys, str], tmp_path: Path
) -> None:
    client, keys, url = pooled
    settings = sqlite_settings(tmp_path / "thread.sqlite")
    thread_keys = make_keys(settings.database_url)
    with TestClient(create_app(settings)) as thread_client:
        expected = thread_client.post(
            BATCH, json={"records": records()}, headers=bearer(thread_keys.service)
        )
    got = client.post(BATCH, json={"records": records()}, headers=bearer(keys.service))
    assert expected.status_code == got.status_code == 201
    strip = [{k: v for k, v in r.items() if k != "id"} for r in got.json()["data"]["records"]]
    assert strip == [
        {k: v for k, v in r.items() if k != "id"} for r in expected.json()["data"]["records"]
    ]
    assert stored(url) == stored(settings.database_url)
    assert len(stored(url)) == 4

    again = client.post(BATCH, json={"records": records()[:1]}, headers=bearer(keys.service))
    assert again.json()["data"]["duplicates"] == 1
    assert again.json()["data"]["records"][0]["id"] == got.json()["data"]["records"][0]["id"]


def test_errors_raised_in_a_process_answer_as_usual(pooled: tuple[TestClient, Keys, str]) -> None:
    client, keys, url = pooled
    bad = client.post(
        BATCH,
        json={"records": [record(), record(docs=[doc("a", "high")])]},
        headers=bearer(keys.alice),
    )
    assert bad.status_code == 422, bad.text
    assert bad.json()["error"]["details"][0]["path"] == "body.records.1.retrievedDocuments.0.score"
    theirs = client.post(
        BATCH, json={"records": [record(userId="bob")]}, headers=bearer(keys.alice)
    )
    assert theirs.status_code == 403
    assert theirs.json()["error"]["code"] == "forbidden"
    assert "Traceback" not in bad.text + theirs.text
    assert stored(url) == []


def test_a_process_that_dies_is_replaced(pooled: tuple[TestClient, Keys, str]) -> None:
    """A dead pool process breaks the pool: batches in it answer 503 (stored or not), a new
    pool stores the next ones, and retrying with the same collectIds stores each once."""
    client, keys, url = pooled
    state = client.app.state.service  # type: ignore[attr-defined]

    def send(n: int) -> int:
        body = {"records": [record(collectId=f"c-{n}")]}
        return client.post(BATCH, json=body, headers=bearer(keys.alice)).status_code

    assert send(0) == 201
    pids = state.bulk.process_ids()
    assert len(pids) == 2 and os.getpid() not in pids
    os.kill(pids[0], signal.SIGKILL)
    statuses: list[int] = []
    n = 1
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (503 in statuses and statuses[-1] == 201):
        status = send(n)
        statuses.append(status)
        for _ in range(100):  # the client's retry: same records, same collectIds
            if status != 503:
                break
            status = send(n)
        assert status == 201
        n += 1
        time.sleep(0.05)
    assert 503 in statuses and statuses[-1] == 201, statuses
    assert len(stored(url)) == n  # c-0 .. c-(n-1), each once
    assert set(state.bulk.process_ids()).isdisjoint(pids)
    # the broken pool's other process is stopped, not left running beside the new pool
    deadline = time.monotonic() + 30
    while running(pids[1]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running(pids[1])


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_bulk_processes_end_with_a_killed_server(tmp_path: Path) -> None:
    """``rankscope serve --bulk-processes 2`` stores batches; SIGKILL of the serving process
    (no shutdown) still ends its bulk processes instead of leaving them behind."""
    url = f"sqlite:///{tmp_path / 'served.sqlite'}"
    keys = make_keys(url)
    port = free_port()
    server = subprocess.Popen(
        [
            *(sys.executable, "-m", "rankscope.cli.app", "serve", "--database-url", url),
            *("--port", str(port), "--bulk-processes", "2"),
        ],
        env={**os.environ, "RANKSCOPE_SERVE_LOG_LEVEL": "warning"},
    )
    try:
        wait_ready(f"http://127.0.0.1:{port}", timeout=60)
        response = httpx.post(
            f"http://127.0.0.1:{port}{BATCH}",
            json={"records": [record(str(i)) for i in range(20)]},
            headers=bearer(keys.alice),
            timeout=30,
        )
        assert response.status_code == 201, response.text
        assert response.json()["data"]["accepted"] == 20
        # the pool's processes (multiprocessing's resource tracker, also a child, ends by
        # itself once they have)
        children = [s.pid for s in proc_children(server.pid) if _is_bulk_process(s.pid)]
        assert len(children) == 2
    finally:
        server.kill()
        server.wait(timeout=30)
    deadline = time.monotonic() + 60
    while any(running(p) for p in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = {p: Path(f"/proc/{p}/cmdline").read_bytes()[:200] for p in children if running(p)}
    assert not left, left
    assert len(stored(url)) == 20


def _is_bulk_process(pid: int) -> bool:
    try:
        return b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
