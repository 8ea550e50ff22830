"""Load benchmark of ``rankscope serve`` on loopback: collect requests/s with p50/p99 latency on
SQLite and PostgreSQL, and records/s through the batch endpoint.

The server runs as ``rankscope serve`` in its own process (one uvicorn worker); ``wrk`` (Debian
package ``wrk``, installed by scripts/install-system-deps) drives it from another process over
127.0.0.1 with keep-alive connections, for a bounded time. Each collect carries 10 retrieved
documents and relevant ids; each batch 1,000 such records. After each run the script counts the
stored rows: every acknowledged (201) request must be stored ("nothing lost"); a few more rows may
be stored than acknowledged (requests in flight when wrk stops).

    python bench/bench_service.py                 # SQLite and PostgreSQL (if installed)
    python bench/bench_service.py --duration 5 --backends sqlite --json out.json
    python bench/bench_service.py --endpoints healthz,batch --workers 2 --batch-connections 4
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from rankscope.service.store.db import make_engine, migrate
from rankscope.service.store.keys import create_key
from rankscope.util.proc import processes

COLLECT = "/api/metrics/retrieval/collect"
BATCH = "/api/metrics/retrieval/collect/batch"

LUA = r"""
wrk.method = "__METHOD__"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer __KEY__"
wrk.body = __BODY__
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) created = 0 end
function response(status, headers, body)
  if status == 201 or (wrk.method == "GET" and status == 200) then created = created + 1 end
end
function done(summary, latency, requests)
  local total = 0
  for _, t in ipairs(threads) do total = total + t:get("created") end
  io.write(string.format(
    'RESULT {"created": %d, "requests": %d, "non2xx": %d, "socket_errors": %d, ' ..
    '"p50_us": %d, "p90_us": %d, "p99_us": %d, "max_us": %d, "duration_us": %d}\n',
    total, summary.requests, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    summary.duration))
end
"""


def one_record(i: int) -> dict[str, Any]:
    docs = [
        {
            "documentId": f"doc-{(i * 7 + j) % 500}",
            "chunkIndex": j % 3,
            "score": round(0.95 - 0.07 * j, 3),
        }
        for j in range(10)
    ]
    return {
        "query": f"how do I configure feature {i % 100}",
        "retrievedDocuments": docs,
        "relevantDocumentIds": [docs[0]["documentId"], docs[3]["documentId"], "doc-999"],
        "options": {"topicId": f"topic-{i % 5}", "searchTypes": {"hybrid": True}},
    }


def lua_string(text: str) -> str:
    return "[==[" + text + "]==]"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(
    database_url: str, port: int, env: dict[str, str], workers: int = 1
) -> subprocess.Popen[bytes]:
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rankscope.cli.app",
            "serve",
            "--database-url",
            database_url,
            "--port",
            str(port),
            "--workers",
            str(workers),
        ],
        env={**os.environ, "RANKSCOPE_SERVE_LOG_LEVEL": "warning", **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(url + "/readyz", timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the server did not start ({database_url})")
        time.sleep(0.1)


def tree_cpu_seconds(pid: int) -> dict[int, float]:
    """CPU time (user + system) of a process and of each of its children, from /proc (Linux)."""
    return {s.pid: s.cpu_seconds for s in processes() if pid in (s.pid, s.ppid)}


def count_rows(admin_url: str) -> int:
    engine = make_engine(admin_url, pool_size=1)
    try:
        with engine.connect() as conn:
            return int(conn.exec_driver_sql("SELECT count(*) FROM retrieval_metrics").scalar() or 0)
    finally:
        engine.dispose()


def wrk(
    url: str, key: str, body: str | None, connections: int, duration: float, folder: Path
) -> dict[str, Any]:
    script = folder / "post.lua"
    lua = LUA.replace("__METHOD__", "GET" if body is None else "POST").replace("__KEY__", key)
    script.write_text(lua.replace("__BODY__", "nil" if body is None else lua_string(body)))
    done = subprocess.run(
        [
            "wrk",
            "-t1",
            f"-c{connections}",
            f"-d{duration:g}s",
            "--timeout",
            "10s",
            "-s",
            str(script),
            url,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    return dict(json.loads(line[len("RESULT ") :]))


def run_backend(
    name: str, app_url: str, admin_url: str, env: dict[str, str], args: argparse.Namespace
) -> list[dict[str, Any]]:
    engine = make_engine(admin_url, pool_size=1)
    if engine.dialect.name == "sqlite":
        migrate(engine)
    key = create_key(engine, "bench")[0]
    engine.dispose()
    port = free_port()
    bulk = {"RANKSCOPE_SERVE_BULK_PROCESSES": str(args.bulk_processes)}
    server = start_server(app_url, port, {**env, **bulk}, args.workers)
    rows: list[dict[str, Any]] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            collect = json.dumps(one_record(1))
            batch = json.dumps({"records": [one_record(i) for i in range(args.batch_size)]})
            base = f"http://127.0.0.1:{port}"
            wrk(base + COLLECT, key, collect, args.connections, 2, folder)  # warm-up

            def measure(
                endpoint: str, path: str, body: str | None, connections: int, per: int
            ) -> dict[str, Any]:
                """One wrk run; ``per`` records per acknowledged request (0: nothing stored,
                CPU counted per request)."""
                before = count_rows(admin_url) if per else 0
                cpu_before = tree_cpu_seconds(server.pid)
                res = wrk(base + path, key, body, connections, args.duration, folder)
                # per process (the server, its workers or bulk processes): shows whether the
                # work spread over the cores
                spent = {
                    p: t - cpu_before.get(p, 0.0) for p, t in tree_cpu_seconds(server.pid).items()
                }
                cpu = sum(spent.values())
                if per:
                    time.sleep(0.5)  # let the last acknowledged writes land before counting
                stored = count_rows(admin_url) - before if per else 0
                seconds = res["duration_us"] / 1e6
                records = res["created"] * per
                return {
                    "backend": name,
                    "endpoint": endpoint,
                    "connections": connections,
                    "seconds": round(seconds, 2),
                    "requests_per_s": round(res["requests"] / seconds, 1),
                    "records_per_s": round(records / seconds, 1),
                    "server_cpu_us_per_record": round(
                        cpu / max(1, records if per else res["requests"]) * 1e6
                    ),
                    "p50_ms": res["p50_us"] / 1000,
                    "p99_ms": res["p99_us"] / 1000,
                    "acknowledged": records,
                    "stored": stored,
                    "non2xx": res["non2xx"] if per else res["requests"] - res["created"],
                    "socket_errors": res["socket_errors"],
                    # CPU seconds of each busy process, largest first
                    "cpu_by_process": sorted(
                        (round(t, 1) for t in spent.values() if t >= 0.1), reverse=True
                    ),
                }

            endpoints = args.endpoints.split(",")
            if "healthz" in endpoints:
                # the ceiling of the HTTP stack on this machine now: no body, no auth, no database
                rows.append(
                    measure("GET /healthz (baseline)", "/healthz", None, args.connections, 0)
                )
            if "collect" in endpoints:
                rows.append(measure("collect", COLLECT, collect, args.connections, 1))
            if "batch" in endpoints:
                rows.append(
                    measure(
                        f"batch of {args.batch_size}",
                        BATCH,
                        batch,
                        args.batch_connections,
                        args.batch_size,
                    )
                )
    finally:
        server.terminate()
        server.wait(timeout=30)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per measured run")
    parser.add_argument(
        "--connections", type=int, default=16, help="concurrent collect connections"
    )
    parser.add_argument("--batch-connections", type=int, default=2)
    parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes")
    parser.add_argument(
        "--bulk-processes", type=int, default=0, help="rankscope serve --bulk-processes"
    )
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument(
        "--endpoints", default="healthz,collect,batch", help="which rows to measure"
    )
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk not found: apt-get install wrk (scripts/install-system-deps does)")

    load_before = os.getloadavg()[0]
    results: list[dict[str, Any]] = []
    backends = args.backends.split(",")
    if "sqlite" in backends:
        with tempfile.TemporaryDirectory() as tmp:
            url = f"sqlite:///{tmp}/bench.sqlite"
            results += run_backend("SQLite (WAL)", url, url, {}, args)
    if "postgres" in backends:
        from rankscope.testing.pgcluster import PgCluster, find_bindir

        if find_bindir() is None:
            print("PostgreSQL not installed: skipping it", file=sys.stderr)
        else:
            from psycopg.conninfo import conninfo_to_dict, make_conninfo

            with PgCluster.start(settings={"max_connections": "60"}) as cluster:
                admin = cluster.create_database("bench_service")
                engine = make_engine(admin, pool_size=1)
                migrate(engine)
                engine.dispose()
                params = conninfo_to_dict(admin)
                params["user"] = "rankscope_app"
                app = make_conninfo(**params)  # type: ignore[arg-type]
                results += run_backend(f"PostgreSQL {cluster.version}", app, admin, {}, args)

    print(
        f"nproc = {os.cpu_count()}, Python {platform.python_version()}, load average before/after: "
        f"{load_before:.2f} / {os.getloadavg()[0]:.2f}; uvicorn workers: {args.workers}; "
        f"bulk processes: {args.bulk_processes}; wrk -t1 on the same machine"
    )
    print()
    print(
        "| backend | endpoint | connections | requests/s | records/s | p50 ms | p99 ms "
        "| server CPU µs per record | CPU s by process | acknowledged | stored | non-2xx |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|")
    for r in results:
        cells = [
            r["backend"],
            r["endpoint"],
            str(r["connections"]),
            f"{r['requests_per_s']:,.0f}",
            f"{r['records_per_s']:,.0f}",
            f"{r['p50_ms']:.1f}",
            f"{r['p99_ms']:.1f}",
            f"{r['server_cpu_us_per_record']:,}",
            " / ".join(f"{t:.1f}" for t in r["cpu_by_process"]),
            f"{r['acknowledged']:,}",
            f"{r['stored']:,}",
            str(r["non2xx"] + r["socket_errors"]),
        ]
        print("| " + " | ".join(cells) + " |")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
