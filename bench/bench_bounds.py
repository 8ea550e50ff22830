"""What one read or export of the largest data a user may store costs ``rankscope serve``:
the server's RSS growth (sampled every 5 ms during the request) and CPU time per request, on
SQLite and PostgreSQL.

The data is the largest each cap allows: events whose attributes are at
``max_event_attributes_bytes`` (16 KiB), and records with 100,000 judgments and 10,000
``options.documentIds`` of 200 characters each (which the records list returns). The server
runs as ``rankscope serve`` in its own process (one worker, default settings). Each export is
followed part by part (``offset`` = the previous part's ``X-Rankscope-Next-Offset``, while
``X-Rankscope-Truncated`` is true), each part measured as its own request.

    python bench/bench_bounds.py                          # both backends (PostgreSQL if installed)
    python bench/bench_bounds.py --backends sqlite --events 1000 --records 40 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from rankscope.service.store.db import make_engine, migrate
from rankscope.service.store.keys import create_key
from rankscope.util import proc

METRICS = "/api/metrics/retrieval"


def rss_mb(pid: int) -> float:
    rss = proc.rss_mb(pid)
    if rss is None:
        raise SystemExit(f"the server (pid {pid}) is gone")
    return rss


def cpu_seconds(pid: int) -> float:
    stat = proc.proc_stat(pid)
    if stat is None:
        raise SystemExit(f"the server (pid {pid}) is gone")
    return stat.cpu_seconds


def measure(client: httpx.Client, pid: int, path: str) -> dict[str, Any]:
    """One GET: the server's RSS growth at its peak, its CPU time, the answer's size."""
    before = rss_mb(pid)
    peak = before
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, rss_mb(pid))
            time.sleep(0.005)

    sampler = threading.Thread(target=sample, daemon=True)
    cpu = cpu_seconds(pid)
    started = time.perf_counter()
    sampler.start()
    size = 0
    try:
        with client.stream("GET", path) as response:
            for chunk in response.iter_bytes():
                size += len(chunk)
            status = response.status_code
            parts = {
                key: response.headers[f"X-Rankscope-{name}"]
                for key, name in (
                    ("queries", "Queries"),
                    ("truncated", "Truncated"),
                    ("next_offset", "Next-Offset"),
                )
                if f"X-Rankscope-{name}" in response.headers
            }
    finally:
        done.set()
        sampler.join()
    return {
        "request": path,
        "status": status,
        "bytes": size,
        "seconds": round(time.perf_counter() - started, 3),
        "cpu_seconds": round(cpu_seconds(pid) - cpu, 3),
        "rss_before_mb": round(before, 1),
        "rss_growth_mb": round(peak - before, 1),
        **parts,
    }


def fill(client: httpx.Client, events: int, records: int) -> str:
    """Store the largest data; returns one record's id."""
    attributes = {"a": "x" * (16 * 1024 - len('{"a":""}'))}
    for start in range(0, events, 200):
        batch = [
            {"action": "search", "queryId": f"q{i}", "attributes": attributes}
            for i in range(start, min(events, start + 200))
        ]
        r = client.post("/api/events", json=batch)
        r.raise_for_status()
    record_id = ""
    for i in range(records):
        body = {
            "query": f"query {i}",
            "retrievedDocuments": [{"documentId": f"d{i}-{j}", "score": 1.0} for j in range(100)],
            "judgments": {f"d{i}-{j}": 1 + j % 3 for j in range(100_000)},
            "options": {"documentIds": [f"{i:04d}-{j:05d}-" + "x" * 189 for j in range(10_000)]},
        }
        r = client.post(f"{METRICS}/collect", json=body)
        r.raise_for_status()
        record_id = r.json()["data"]["id"]
    return record_id


def run_backend(
    name: str, database_url: str, admin_url: str, args: argparse.Namespace
) -> list[dict[str, Any]]:
    engine = make_engine(admin_url, pool_size=1)
    try:
        if engine.dialect.name == "sqlite":
            migrate(engine)
        key = create_key(engine, "alice")[0]
    finally:
        engine.dispose()
    port = 18000 + os.getpid() % 1000
    env = {k: v for k, v in os.environ.items() if not k.startswith("RANKSCOPE_SERVE_")}
    env.update(
        RANKSCOPE_SERVE_DATABASE_URL=database_url,
        RANKSCOPE_SERVE_PORT=str(port),
        RANKSCOPE_SERVE_LOG_LEVEL="warning",
    )
    server = subprocess.Popen(
        [sys.executable, "-m", "rankscope.cli.app", "serve"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    out = []
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(url + "/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.2)
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(base_url=url, headers=headers, timeout=600) as client:
            started = time.perf_counter()
            record_id = fill(client, args.events, args.records)
            print(
                f"{name}: stored {args.events} events and {args.records} records in "
                f"{time.perf_counter() - started:.0f} s",
                flush=True,
            )
            for path in (
                "/api/events?limit=1000",
                f"{METRICS}?limit=1000",
                f"{METRICS}/{record_id}",
                f"{METRICS}/export?format=trec",
                f"{METRICS}/export?format=jsonl",
                f"{METRICS}/export?format=suite",
                f"{METRICS}/export?format=trec&part=qrels",
            ):
                offset = "0"
                while True:
                    asked = f"{path}&offset={offset}" if offset != "0" else path
                    result = {"backend": name, **measure(client, server.pid, asked)}
                    print(json.dumps(result), flush=True)
                    out.append(result)
                    if result.get("truncated") != "true":
                        break
                    offset = result["next_offset"]
    finally:
        server.terminate()
        server.wait(timeout=60)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--records", type=int, default=40)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="rankscope-bounds-") as tmp:
        if "sqlite" in args.backends:
            url = f"sqlite:///{Path(tmp) / 'metrics.sqlite'}"
            results += run_backend("sqlite", url, url, args)
        if "postgres" in args.backends:
            from psycopg.conninfo import conninfo_to_dict, make_conninfo

            from rankscope.testing.pgcluster import PgCluster, find_bindir

            if find_bindir() is None:
                print("postgres: server binaries not found; skipped")
            else:
                cluster = PgCluster.start()
                try:
                    admin = cluster.create_database("bounds")
                    engine = make_engine(admin, pool_size=1)
                    try:
                        migrate(engine)
                    finally:
                        engine.dispose()
                    params = conninfo_to_dict(admin)
                    params["user"] = "rankscope_app"
                    app = make_conninfo(**params)  # type: ignore[arg-type]
                    results += run_backend("postgres", app, admin, args)
                finally:
                    cluster.stop()
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
