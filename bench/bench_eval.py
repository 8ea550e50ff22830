"""End-to-end and evaluate-only timings: rankscope vs pytrec_eval, ranx and ir_measures.

Measures {map, ndcg_cut.10, P.10, recall.100, recip_rank} on the files written by
``bench/make_data.py`` (default ``bench/data/run.txt`` and ``bench/data/qrels.txt``). Each tool runs
in its own subprocess, so imports, caches and peak memory do not leak between them. For every
tool the worker times reading the files the way its users do, then evaluation; ranx compiles its
kernels with numba on first use, so ranx first evaluates a tiny run (the JIT warm-up, timed
apart) and then the real one. rankscope also gets a parse-only row, and a row for the command
itself (``rankscope eval``, timed from outside: start-up and imports included).

Every row also gives the whole process's user and system CPU seconds, its page faults (minor +
major) and peak RSS, from ``wait4``; the speed-up over pytrec_eval is given both in wall time and
in CPU time, because rankscope parses on every core and pytrec_eval on one: the wall-time ratio
depends on how many cores are free, the CPU-time ratio much less.

``--busy`` keeps one core busy with ``yes > /dev/null`` while the tools run (a second job on a
two-core machine); ``--repeat N`` runs every row N times, in turn, and reports the medians.

``--baseline NAME=DIR`` adds the rankscope rows again for the source tree ``DIR`` (e.g. an export
of an earlier commit: ``git archive <commit> src | tar -x -C /tmp/before``), so that a change is
measured before and after in the same run.

Usage::

    python bench/make_data.py
    python bench/bench_eval.py [--data bench/data] [--out bench/RESULTS.md] [--tools ...]
                               [--baseline before=/tmp/before/src] [--busy] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

TOOLS = ("rankscope-parse", "rankscope", "rankscope-cli", "pytrec_eval", "ranx", "ir_measures")
HERE = Path(__file__).resolve().parent
REPO = HERE.parent
MEASURE_KEYS = ("map", "ndcg@10", "P@10", "recall@100", "mrr")


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(start: tuple[float, float]) -> dict[str, float]:
    wall, cpu = _clock()
    return {"wall": wall - start[0], "cpu": cpu - start[1]}


def _plain_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with path.open() as fh:
        for line in fh:
            q, _, d, r = line.split()
            qrels.setdefault(q, {})[d] = int(r)
    return qrels


def _plain_run(path: Path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    with path.open() as fh:
        for line in fh:
            q, _, d, _, s, _ = line.split()[:6]
            run.setdefault(q, {})[d] = float(s)
    return run


def _worker_rankscope(qrels_path: Path, run_path: Path, parse_only: bool) -> dict[str, Any]:
    t = _clock()
    from rankscope import evaluate
    from rankscope.data import read_qrels, read_run

    out: dict[str, Any] = {"import": _since(t)}
    if not parse_only:
        # what a user calls: evaluate() on the two paths (it reads them concurrently)
        t = _clock()
        res = evaluate(qrels_path, run_path, measures=MEASURE_KEYS)
        out["end_to_end"] = _since(t)
        means = res.mean()
        out["means"] = {k: means[k] for k in MEASURE_KEYS}
        del res
    # the same work in stages, for the breakdown
    t = _clock()
    run = read_run(run_path)
    out["parse_run"] = _since(t)
    t = _clock()
    qrels = read_qrels(qrels_path)
    out["parse_qrels"] = _since(t)
    if parse_only:
        return out
    t = _clock()
    evaluate(qrels, run, measures=MEASURE_KEYS)
    out["evaluate"] = _since(t)
    return out


def _worker_pytrec_eval(qrels_path: Path, run_path: Path) -> dict[str, Any]:
    t = _clock()
    import pytrec_eval

    out: dict[str, Any] = {"import": _since(t)}
    t = _clock()
    run = _plain_run(run_path)
    out["parse_run"] = _since(t)
    t = _clock()
    qrels = _plain_qrels(qrels_path)
    out["parse_qrels"] = _since(t)
    names = {"map", "ndcg_cut.10", "P.10", "recall.100", "recip_rank"}
    t = _clock()
    per_query = pytrec_eval.RelevanceEvaluator(qrels, names).evaluate(run)
    out["evaluate"] = _since(t)
    keys = {"map": "map", "ndcg@10": "ndcg_cut_10", "P@10": "P_10", "recall@100": "recall_100"}
    keys["mrr"] = "recip_rank"
    n = len(per_query)
    out["means"] = {k: sum(v[m] for v in per_query.values()) / n for k, m in keys.items()}
    return out


def _worker_ranx(qrels_path: Path, run_path: Path) -> dict[str, Any]:
    t = _clock()
    import ranx

    out: dict[str, Any] = {"import": _since(t)}
    metrics = ["map", "ndcg@10", "precision@10", "recall@100", "mrr"]
    t = _clock()
    tiny_q = ranx.Qrels({"q": {"a": 1, "b": 0}})
    tiny_r = ranx.Run({"q": {"a": 1.0, "b": 2.0, "c": 0.5}})
    ranx.evaluate(tiny_q, tiny_r, metrics)
    out["jit_warmup"] = _since(t)
    t = _clock()
    run = ranx.Run.from_file(str(run_path), kind="trec")
    out["parse_run"] = _since(t)
    t = _clock()
    qrels = ranx.Qrels.from_file(str(qrels_path), kind="trec")
    out["parse_qrels"] = _since(t)
    t = _clock()
    means = ranx.evaluate(qrels, run, metrics)
    out["evaluate"] = _since(t)
    out["means"] = dict(zip(MEASURE_KEYS, (float(means[m]) for m in metrics), strict=True))
    return out


def _worker_ir_measures(qrels_path: Path, run_path: Path) -> dict[str, Any]:
    t = _clock()
    import ir_measures
    from ir_measures import AP, RR, P, R, nDCG

    out: dict[str, Any] = {"import": _since(t)}
    # ir_measures' readers are lazy generators: materialise them so parsing is timed apart.
    t = _clock()
    run = list(ir_measures.read_trec_run(str(run_path)))  # type: ignore[no-untyped-call]
    out["parse_run"] = _since(t)
    t = _clock()
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))  # type: ignore[no-untyped-call]
    out["parse_qrels"] = _since(t)
    measures = [AP, nDCG @ 10, P @ 10, R @ 100, RR]
    t = _clock()
    agg = ir_measures.calc_aggregate(measures, qrels, run)
    out["evaluate"] = _since(t)
    out["means"] = dict(zip(MEASURE_KEYS, (float(agg[m]) for m in measures), strict=True))
    return out


WORKERS: dict[str, Callable[[Path, Path], dict[str, Any]]] = {
    "rankscope-parse": lambda q, r: _worker_rankscope(q, r, parse_only=True),
    "rankscope": lambda q, r: _worker_rankscope(q, r, parse_only=False),
    "pytrec_eval": _worker_pytrec_eval,
    "ranx": _worker_ranx,
    "ir_measures": _worker_ir_measures,
}


def _wait(
    cmd: list[str], env: dict[str, str], timeout: float
) -> tuple[int, bytes, bytes, dict[str, float]]:
    """Run ``cmd``; its exit status, output and the process's own resource use (``wait4``)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    used = {
        "process_wall": wall,
        "user": usage.ru_utime,
        "sys": usage.ru_stime,
        "cpu": usage.ru_utime + usage.ru_stime,
        "faults": float(usage.ru_minflt + usage.ru_majflt),
        "maxrss_mb": usage.ru_maxrss / 1024,
    }
    return proc.returncode, stdout, stderr, used


def _env(src: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    tree = str(src if src is not None else REPO / "src")  # this tree, not an install
    env["PYTHONPATH"] = os.pathsep.join(p for p in (tree, env.get("PYTHONPATH")) if p)
    return env


def _run_worker(
    tool: str, qrels: Path, run: Path, timeout: float, src: Path | None = None
) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--worker", tool, "--qrels", str(qrels), "--run", str(run)]
    code, stdout, stderr, used = _wait(cmd, _env(src), timeout)
    if code != 0:
        tail = (stderr or stdout).decode(errors="replace").strip().splitlines()[-3:]
        return {"error": f"exit {code}: {' | '.join(tail)}"}
    result: dict[str, Any] = json.loads(stdout.decode().strip().splitlines()[-1])
    result.update(used)
    return result


def _run_cli(qrels: Path, run: Path, timeout: float, src: Path | None = None) -> dict[str, Any]:
    """``rankscope eval`` as a user runs it: wall, CPU and peak memory of the whole process."""
    measures = [a for m in ("map", "ndcg@10", "P@10", "recall@100", "mrr") for a in ("-m", m)]
    cmd = [sys.executable, "-m", "rankscope", "eval", str(qrels), str(run), *measures, "-f", "json"]
    code, stdout, stderr, used = _wait(cmd, _env(src), timeout)
    if code != 0:
        tail = (stderr or stdout).decode(errors="replace").strip().splitlines()[-3:]
        return {"error": f"exit {code}: {' | '.join(tail)}"}
    mean = json.loads(stdout)["runs"][0]["mean"]
    return {**used, "means": {k: mean[k] for k in MEASURE_KEYS}}


def _compile(src: Path) -> None:
    """Byte-compile a source tree, as installing it does (``PYTHONDONTWRITEBYTECODE`` would
    otherwise make every start of the command compile rankscope's modules again)."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(src)],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def _fmt(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds:.2f}"


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per number, the median over the runs (stage timings included); the first run's means."""
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return runs[0]

    def merge(items: list[Any]) -> Any:
        first = items[0]
        if isinstance(first, dict):
            return {k: merge([i[k] for i in items if k in i]) for k in first}
        if isinstance(first, int | float) and not isinstance(first, bool):
            return float(statistics.median(items))
        return first

    merged: dict[str, Any] = merge(ok)
    merged["means"] = ok[0].get("means")
    merged["runs"] = len(ok)
    return merged


def _row(tool: str, r: dict[str, Any]) -> str:
    if "error" in r:
        return f"| {tool} | {r['error']} |" + " |" * 10
    inside = "parse_run" in r
    ev = r.get("evaluate", {}).get("wall")
    jit = r.get("jit_warmup", {}).get("wall")
    cells = [
        tool,
        _fmt(r["parse_run"]["wall"]) if inside else "—",
        _fmt(_parse(r)) if inside else "—",
        _fmt(ev),
        _fmt(_total(r) if ev is not None or not inside else None),
        _fmt(jit),
        _fmt(r["process_wall"]),
        _fmt(r["user"]),
        _fmt(r["sys"]),
        _fmt(r["cpu"]),
        f"{r['faults']:,.0f}",
        f"{r['maxrss_mb']:.0f}",
    ]
    return "| " + " | ".join(cells) + " |"


def _parse(r: dict[str, Any]) -> float:
    return float(r["parse_run"]["wall"] + r["parse_qrels"]["wall"])


def _total(r: dict[str, Any]) -> float:
    """End to end: timed as one call where the worker has it (rankscope's evaluate() on the
    paths), else parsing plus evaluation, or the whole process for a command."""
    if "end_to_end" in r:
        return float(r["end_to_end"]["wall"])
    if "parse_run" not in r:
        return float(r["process_wall"])
    return _parse(r) + float(r.get("evaluate", {}).get("wall", 0.0))


def _stage_cpu(r: dict[str, Any]) -> float:
    """CPU seconds (all threads) of the work timed inside a worker: the end-to-end call where
    there is one, else parsing plus evaluation."""
    if "end_to_end" in r:
        return float(r["end_to_end"]["cpu"])
    return float(sum(r[k]["cpu"] for k in ("parse_run", "parse_qrels", "evaluate") if k in r))


def _ratios(results: dict[str, dict[str, Any]]) -> list[str]:
    """How many times faster than pytrec_eval, from the rows of this run, in wall time and in
    CPU time (user + system): the command against pytrec_eval's whole process, the library
    call against pytrec_eval's parsing plus evaluation, and evaluation alone."""
    peer = results.get("pytrec_eval", {})
    if "error" in peer or "evaluate" not in peer:
        return []
    out = [
        "",
        "Speed-up over pytrec_eval in this run. pytrec_eval's whole process: "
        f"{_fmt(peer['process_wall'])} s wall, {_fmt(peer['cpu'])} s CPU ({_fmt(peer['user'])} "
        f"user + {_fmt(peer['sys'])} system); parse + evaluate {_fmt(_total(peer))} s wall, "
        f"{_fmt(_stage_cpu(peer))} s CPU; evaluate only {_fmt(peer['evaluate']['wall'])} s.",
        "",
        "| rankscope | compared with pytrec_eval's | wall | CPU (user + system) "
        "| evaluate only (wall) |",
        "|---|---|---:|---:|---:|",
    ]
    for tool, r in results.items():
        base = tool.split(" (")[0]  # "rankscope (before)" is a baseline of "rankscope"
        if not base.startswith("rankscope") or base == "rankscope-parse" or "error" in r:
            continue
        if base == "rankscope-cli":
            against = "whole process"
            wall, cpu = peer["process_wall"] / r["process_wall"], peer["cpu"] / r["cpu"]
        else:
            against = "parse + evaluate"
            wall, cpu = _total(peer) / _total(r), _stage_cpu(peer) / _stage_cpu(r)
        ev = r.get("evaluate", {}).get("wall")
        only = f"{peer['evaluate']['wall'] / ev:.1f}x" if ev else "—"
        out.append(f"| {tool} | {against} | {wall:.1f}x | {cpu:.1f}x | {only} |")
    return out


def _relative(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f}, {five:.2f}, {fifteen:.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    ap.add_argument("--tools", nargs="+", default=list(TOOLS), choices=TOOLS)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--repeat", type=int, default=1, help="runs of every row, reported as medians")
    ap.add_argument(
        "--busy",
        action="store_true",
        help="keep one core busy with `yes > /dev/null` while the tools run",
    )
    ap.add_argument(
        "--baseline",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="also time rankscope from the source tree DIR (its `src` folder), rows named NAME",
    )
    ap.add_argument("--worker", choices=TOOLS, help=argparse.SUPPRESS)
    ap.add_argument("--qrels", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--run", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.worker:
        result = WORKERS[args.worker](args.qrels, args.run)
        result["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(result))
        return

    qrels, run = args.data / "qrels.txt", args.data / "run.txt"
    if not (qrels.is_file() and run.is_file()):
        sys.exit(f"missing {qrels} or {run}; run bench/make_data.py first")
    trees: list[tuple[str, Path | None]] = [("", None)]
    for item in args.baseline:
        name, _, folder = item.partition("=")
        trees.append((f" ({name})", Path(folder).resolve()))
    for _, src in trees:
        _compile(src if src is not None else REPO / "src")
    jobs = [
        (tool, label, src)
        for tool in args.tools
        for label, src in (trees if tool.startswith("rankscope") else trees[:1])
    ]
    runs: dict[str, list[dict[str, Any]]] = {tool + label: [] for tool, label, _ in jobs}
    load_before = _load()
    busy = subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) if args.busy else None
    try:
        for round_ in range(args.repeat):
            for tool, label, src in jobs:  # in turn, so that drifting load hits every row
                print(f"running {tool}{label} ({round_ + 1}/{args.repeat}) ...", file=sys.stderr)
                if tool == "rankscope-cli":
                    result = _run_cli(qrels, run, args.timeout, src)
                else:
                    result = _run_worker(tool, qrels, run, args.timeout, src)
                result["load"] = os.getloadavg()[0]
                runs[tool + label].append(result)
                print(f"  {json.dumps(result)}", file=sys.stderr, flush=True)
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
    load_after = _load()
    results = {tool: _median(r) for tool, r in runs.items()}

    n_lines = sum(1 for _ in run.open("rb"))
    command = [Path(sys.executable).name, _relative(Path(sys.argv[0])), *sys.argv[1:]]
    mode = (
        "one core kept busy by `yes > /dev/null` throughout"
        if args.busy
        else "nothing started beside the tools"
    )
    # here, not at the top: the workers this script starts import the rankscope they measure
    from rankscope.util.proc import cpu_model

    lines = [
        "# Evaluation benchmark",
        "",
        f"Data: `{_relative(run)}` ({n_lines:,} lines, {run.stat().st_size / 2**20:.0f} MiB) and "
        f"`{_relative(qrels)}`,",
        "from `bench/make_data.py` (10,000 queries x 1,000 docs; 30 judged docs per query).",
        "Measures: map, ndcg_cut.10, P.10, recall.100, recip_rank.",
        "",
        f"Machine: `nproc` = {os.cpu_count()}, CPU: {cpu_model()}, Python "
        f"{platform.python_version()}. Load average (1, 5, 15 min) before: {load_before}; "
        f"after: {load_after}. Mode: {mode}. Runs per row: {args.repeat}"
        + (" (medians)" if args.repeat > 1 else "")
        + ".",
        "",
        "Command: `" + " ".join(command) + "`",
        "",
        "Times in seconds; each tool in its own process. `rankscope-cli` is the command "
        "`rankscope eval` (interpreter start-up and imports included). The stage columns "
        "(parse, evaluate, end-to-end) are wall times inside the worker; `process` wall, user, "
        "system, CPU, page faults (minor + major) and peak RSS are the whole process's, from "
        "`wait4`.",
        "",
        "| tool | parse run | parse run + qrels | evaluate only | end-to-end | JIT warm-up "
        "| process wall | user | system | CPU | page faults | peak RSS (MiB) |",
        "|---|" + "---:|" * 11,
    ]
    lines += [_row(tool, r) for tool, r in results.items()]
    lines += _ratios(results)
    lines += ["", "Mean values (all tools should agree):", ""]
    lines += ["| tool | " + " | ".join(MEASURE_KEYS) + " |", "|---|" + "---:|" * len(MEASURE_KEYS)]
    for tool, r in results.items():
        if r.get("means"):
            vals = " | ".join(f"{r['means'][k]:.4f}" for k in MEASURE_KEYS)
            lines.append(f"| {tool} | {vals} |")
    lines += [
        "",
        "Notes: pytrec_eval is fed dicts parsed with plain Python (`line.split()`), as its users "
        "do; ranx reads with `Run.from_file(kind='trec')`; ir_measures' readers are generators, "
        "materialised with `list()` so parsing is timed apart from `calc_aggregate`. rankscope's "
        "end-to-end is one `evaluate(qrels_path, run_path, ...)` call (it reads the two files "
        "concurrently); its other columns time the same work again in stages, one after the "
        "other, so its process CPU covers the work twice (its ratio uses the end-to-end call's "
        "CPU). rankscope parses on every core and pytrec_eval on one: compare wall times only "
        "with the core count and load in view.",
        "",
    ]
    kept = ""  # hand-written sections after the table survive a new run
    if args.out.is_file():
        old = args.out.read_text()
        at = old.find("\n## ")
        kept = old[at + 1 :] if at >= 0 else ""
    args.out.write_text("\n".join(lines) + ("\n" + kept if kept else ""))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
