"""Insert cost of the service's batch writes as the table grows: random (version 4) against
time-ordered (version 7) record ids, on SQLite.

Each arm starts from an empty database file and stores ``--batches`` batches of 1,000 records
(bench_service.py's records: 10 documents each) through ``MetricsStore``'s own insert
(``_insert_plan``, one transaction per batch, the service's WriteLock and pragmas). Only the
insert and its commit are timed (the rows are built before); the script prints the median
microseconds per record of each window of ``--window`` batches, so the growth with the table
shows. The random arm replaces the id generator of ``build_rows`` with ``uuid.uuid4``, what the
service used before.

    python bench/bench_insert.py --batches 200
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_service import one_record

import rankscope.service.ingest.rows as records_module
from rankscope.collect.wire import BatchCreate
from rankscope.service.ingest.rows import NewRecord, build_rows, settings_thresholds
from rankscope.service.ingest.writer import MetricsStore
from rankscope.service.settings import ServiceSettings
from rankscope.service.store.db import make_engine, migrate
from rankscope.service.store.records import _insert_plan


def random_ids(n: int) -> list[uuid.UUID]:
    return [uuid.uuid4() for _ in range(n)]


def run(ids: str, batches: int, window: int) -> dict[str, object]:
    if ids == "v4":
        records_module.uuid7s = random_ids  # type: ignore[assignment, attr-defined]
    with tempfile.TemporaryDirectory() as tmp:
        engine = make_engine(f"sqlite:///{tmp}/insert.sqlite")
        migrate(engine)
        store = MetricsStore(engine, settings_thresholds(ServiceSettings()))
        body = json.dumps({"records": [one_record(i) for i in range(1000)]})
        items = [NewRecord(r, "bench") for r in BatchCreate.model_validate_json(body).records]
        sql, convert = _insert_plan(False)
        times: list[float] = []
        medians: list[float] = []
        for _ in range(batches):
            params = [convert(r) for r in build_rows(items, settings_thresholds(ServiceSettings()))]
            start = time.perf_counter()
            with store.transaction(None, write=True) as conn:
                conn.exec_driver_sql(sql, params)
            times.append((time.perf_counter() - start) / len(params) * 1e6)
            if len(times) == window:
                medians.append(statistics.median(times))
                times = []
        size = os.path.getsize(f"{tmp}/insert.sqlite") / 1e6
        store.close()
    return {"medians": medians, "mb": size}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--window", type=int, default=50)
    parser.add_argument("--ids", nargs="+", default=["v4", "v7"], choices=["v4", "v7"])
    args = parser.parse_args()
    gc.disable()  # the writes alone; the collector's pauses are another matter
    results = {}
    for ids in args.ids:
        # each arm in a fresh process: the random arm patches the id generator
        if len(args.ids) > 1:
            out = subprocess.run(
                [
                    *(sys.executable, __file__, "--batches", str(args.batches)),
                    *("--window", str(args.window), "--ids", ids),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            results[ids] = json.loads(out.stdout.strip().splitlines()[-1])
        else:
            print(json.dumps(run(ids, args.batches, args.window)))
            return
    print(f"nproc = {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}")
    print("| rows in the table | " + " | ".join(f"{i} ids: µs per record" for i in results) + " |")
    print("|---:|" + "---:|" * len(results))
    for k in range(args.batches // args.window):
        rows = f"{k * args.window * 1000:,}–{(k + 1) * args.window * 1000:,}"
        cells = [f"{results[i]['medians'][k]:.1f}" for i in results]  # type: ignore[index]
        print(f"| {rows} | " + " | ".join(cells) + " |")
    print("| file size, MB | " + " | ".join(f"{results[i]['mb']:.0f}" for i in results) + " |")


if __name__ == "__main__":
    main()
