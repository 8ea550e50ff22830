"""Process CPU per record of the batch write path's Python stages, without HTTP or the database.

One 1,000-record batch (``bench_service.one_record``: 10 documents with chunk indexes and
relevant ids each) is validated once; then, repeated, each stage runs on it and its process
CPU time (``time.process_time``) is divided by the records: ``build_rows`` (with the
``score_values`` inside it: qrels, run, one ``evaluate()`` call), ``convert`` (row -> INSERT
parameters, SQLite), ``outcomes`` (no ``collectId``s: no query), and the batch route's
response body, once with ``str(uuid)`` per record and once with the UUID handed to orjson (the
same bytes). The garbage collector is set as ``rankscope serve`` sets it (``tune_gc``).

With ``--baseline DIR`` (a tree exported by ``git archive <rev> src | tar -x -C DIR``) the
baseline's ``ingest/rows.py``, ``ingest/measures.py`` and ``store/records.py`` (in an older tree
``records.py``, ``measures.py`` and ``store/repository.py``) run in the same process,
alternating with the current ones repetition by repetition, so that both see the same load of
a shared machine; the per-pair ratio of the totals is printed with its quartiles.

    python bench/bench_write_path.py --reps 60
    python bench/bench_write_path.py --reps 60 --baseline /tmp/before
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).parent))
from bench_service import one_record

from rankscope.collect.wire import BatchCreate
from rankscope.service.ingest import measures as current_measures
from rankscope.service.ingest import rows as current_records
from rankscope.service.ingest.rows import NewRecord, settings_thresholds
from rankscope.service.server import tune_gc
from rankscope.service.settings import ServiceSettings
from rankscope.service.store import records as current_repository

STAGES = ("build_rows", "score_values", "convert", "outcomes", "total")
RESPONSES = ("respond str(id)", "respond orjson id")


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _baseline(root: Path) -> tuple[ModuleType, ModuleType, ModuleType]:
    service = root / "src" / "rankscope" / "service"
    if (service / "ingest").is_dir():  # the layout with ingest/ and store/records.py
        paths = (service / "ingest" / "measures.py", service / "ingest" / "rows.py")
        repository_path = service / "store" / "records.py"
    else:
        paths = (service / "measures.py", service / "records.py")
        repository_path = service / "store" / "repository.py"
    measures = _load("baseline_measures", paths[0])
    records = _load("baseline_records", paths[1])
    records.measures = measures  # type: ignore[attr-defined]  # a module loaded by path
    repository = _load("baseline_repository", repository_path)
    return records, measures, repository


class _NoConnection:
    """_outcomes queries the database only for rows with a collectId (none here)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=40)
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--baseline", type=Path, help="an exported tree to compare with")
    parser.add_argument("--json", type=Path, help="write every repetition's values here")
    args = parser.parse_args()

    versions = {"current": (current_records, current_measures, current_repository)}
    if args.baseline is not None:
        versions = {"baseline": _baseline(args.baseline), **versions}
    n = args.records
    body = json.dumps({"records": [one_record(i) for i in range(n)]}).encode()
    batch = BatchCreate.model_validate_json(body)
    items = [NewRecord(r, "bench") for r in batch.records]
    lookup = settings_thresholds(ServiceSettings())
    clock = time.process_time
    scoring: dict[str, float] = {}
    for name, (_, measures, _) in versions.items():
        inner = measures.score_values

        def timed(its: Any, inner: Any = inner, name: str = name) -> Any:
            start = clock()
            out = inner(its)
            scoring[name] += clock() - start
            return out

        measures.score_values = timed  # type: ignore[attr-defined]  # a module loaded by path
    times: dict[str, dict[str, list[float]]] = {
        v: {s: [] for s in (*STAGES, *RESPONSES)} for v in versions
    }
    tune_gc()
    for rep in range(args.reps + 2):  # the first two warm up
        order = list(versions) if rep % 2 else list(reversed(versions))
        for name in order:
            records, _, repository = versions[name]
            scoring[name] = 0.0
            t0 = clock()
            rows = records.build_rows(items, lookup)
            t1 = clock()
            _, convert = repository._insert_plan(False)
            params = [convert(r) for r in rows]
            t2 = clock()
            outcomes = repository._outcomes(_NoConnection(), rows)
            t3 = clock()
            listed = [
                {"id": str(o.id), "collectId": r.collect_id, "duplicate": o.duplicate}
                for o, r in zip(outcomes, batch.records, strict=True)
            ]
            text = orjson.dumps({"success": True, "data": {"records": listed}})
            t4 = clock()
            listed = [
                {"id": o.id, "collectId": r.collect_id, "duplicate": o.duplicate}
                for o, r in zip(outcomes, batch.records, strict=True)
            ]
            native = orjson.dumps({"success": True, "data": {"records": listed}})
            t5 = clock()
            assert native == text
            if rep >= 2:
                spent = (t1 - t0, scoring[name], t2 - t1, t3 - t2, t3 - t0, t4 - t3, t5 - t4)
                for stage, seconds in zip((*STAGES, *RESPONSES), spent, strict=True):
                    times[name][stage].append(seconds * 1e6 / n)
            del rows, params, outcomes, listed
    print(
        f"CPU per record (us; {n} records a batch, {args.reps} repetitions, "
        f"nproc {os.cpu_count()}): median / min"
    )
    print(f"{'stage':20s}" + "".join(f"{name:>22s}" for name in versions))
    for stage in (*STAGES, *RESPONSES):
        cells = "".join(
            f"{statistics.median(times[v][stage]):13.2f} / {min(times[v][stage]):5.2f}"
            for v in versions
        )
        print(f"{stage:20s}{cells}")
    if args.baseline is not None:
        ratios = [
            b / a
            for a, b in zip(times["baseline"]["total"], times["current"]["total"], strict=True)
        ]
        q1, q2, q3 = statistics.quantiles(ratios, n=4)
        print(f"total current/baseline per pair: median {q2:.3f} (quartiles {q1:.3f}..{q3:.3f})")
    if args.json is not None:
        args.json.write_text(json.dumps(times, indent=1) + "\n")


if __name__ == "__main__":
    main()
