"""Judging throughput: ``rankscope judge`` end to end against a loopback server with fixed latency.

The loopback LLM server (rankscope.testing.llm_server) answers every request after ``--delay``
seconds (no slot limit, so the server is never the bottleneck). For each wire format (anthropic,
openai) and each ``--concurrency``, ``rankscope judge`` runs as a subprocess over a deterministic
pool of ``--pairs`` pairs, with a fresh cache and output folder. The ideal wall time is
``pairs x delay / concurrency``; printed: wall time, % of ideal, the client's CPU seconds (user +
sys of the subprocess) and CPU ms per call. Each cell runs ``--repeat`` times (concurrency 1
once) and the median run is shown; a run that failed a pair, made more calls than pairs or
lowered its concurrency (the adaptive controller must not throttle when nothing times out) is
flagged.

``--baseline REV`` also runs the code of a git revision (``git archive REV src`` unpacked in a
temporary folder), interleaved with the working tree, cell by cell, so both are measured in the
same run under the same load; the judgments of both are compared (labels, hashes, tokens, cost,
qrels) and must be identical. ``--extra LABEL=SRC`` measures a further ``src`` tree the same way
(the working tree with a patch not yet committed, say). From the server's clock (shared with the
client's): the time from launch to the first request (start-up) and from the last answer to
exit (writing the outputs).
Each cell is followed by a rerun into the finished output (every pair already done, no call
made): the CLI's fixed cost. Byte-code is compiled in a warm-up run first and cached (in a
temporary folder), as for an installed package.

    python bench/bench_judge.py --baseline 4615529
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from rankscope.testing.llm_server import Hang, Reply, ScriptedLLMServer

REPO = Path(__file__).resolve().parents[1]

_WORDS = [
    "flow", "boundary", "layer", "pressure", "wing", "shock", "heat", "transfer", "supersonic",
    "laminar", "turbulent", "velocity", "surface", "mach", "number", "drag", "lift", "body",
    "cone", "plate", "theory", "experiment", "buckling", "panel", "stress", "cylinder", "nozzle",
    "jet", "wake", "separation", "skin", "friction", "temperature", "gas",
]  # fmt: skip


def write_pool(path: Path, pairs: int, seed: int = 7) -> None:
    """``pairs`` (query, doc) records over 20 queries, passages of 60-200 words (seeded)."""
    rnd = random.Random(seed)
    with path.open("w") as f:
        for i in range(pairs):
            q = i % 20
            words = rnd.randint(60, 200)
            rec = {
                "query_id": str(q + 1),
                "query": " ".join(random.Random(q).choices(_WORDS, k=8)),
                "doc_id": f"d{i}",
                "title": f"document {i}",
                "text": " ".join(rnd.choices(_WORDS, k=words)),
            }
            f.write(json.dumps(rec) + "\n")


@dataclass(frozen=True)
class Result:
    wall_s: float
    cpu_s: float  # user + sys of the subprocess
    judged: int
    failed: int
    started: float  # time.monotonic() at launch and exit
    ended: float


def run_judge(
    src: Path, pool: Path, out: Path, fmt: str, concurrency: int, base_url: str, pycache: Path
) -> Result:
    env = {**os.environ, "PYTHONPATH": str(src), "ANTHROPIC_API_KEY": "x", "OPENAI_API_KEY": "x"}
    # Byte-code cached as an installed package has it (an environment may forbid writing it).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    cmd = [
        sys.executable, "-m", "rankscope", "judge", str(pool), "--provider", fmt,
        "--model", "bench-model", "--base-url", base_url, "--concurrency", str(concurrency),
        "--cache-path", str(out / "cache.sqlite"), "--out", str(out),
    ]  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    ended = time.monotonic()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"rankscope judge failed ({src}):\n{proc.stdout}\n{proc.stderr}")
    summary = json.loads((out / "summary.json").read_text())
    return Result(ended - started, cpu, summary["judged"], len(summary["failed"]), started, ended)


def comparable(out: Path) -> tuple[list[tuple[object, ...]], str]:
    """What must not change: each row's label, reason, hashes, tokens and cost; the qrels."""
    rows = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    keys = (
        "query_id", "doc_id", "label", "reason", "rationale", "raw_text", "provider", "model",
        "template_hash", "query_hash", "doc_hash", "input_tokens", "output_tokens", "cost_usd",
        "cached", "passage_truncated", "passage_tokens",
    )  # fmt: skip
    return sorted(tuple(r[k] for k in keys) for r in rows), (out / "qrels.txt").read_text()


def export(rev: str, dest: Path) -> Path:
    """The ``src`` tree of ``rev`` unpacked under ``dest``."""
    dest.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev, "src"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest / "src"


def versions_to_measure(
    baseline: str | None, extras: list[str], root: Path
) -> list[tuple[str, Path]]:
    """(label, src folder): the baseline revision exported under ``root``, the working tree,
    then each ``LABEL=SRC`` of ``extras``."""
    versions: list[tuple[str, Path]] = []
    if baseline:
        versions.append((f"baseline {baseline}", export(baseline, root / "base")))
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
        capture_output=True, text=True, check=False,
    ).stdout.strip()  # fmt: skip
    dirty = subprocess.run(
        ["git", "-C", str(REPO), "status", "--porcelain", "src"],
        capture_output=True, text=True, check=False,
    ).stdout.strip()  # fmt: skip
    versions.append((f"current {head}{'+changes' if dirty else ''}", REPO / "src"))
    for extra in extras:
        label, _, folder = extra.partition("=")
        versions.append((label, Path(folder).resolve()))
    return versions


@dataclass(frozen=True)
class Cell:
    """One judge run into a fresh output, seen from the client and the server."""

    result: Result
    first_request_s: float  # launch -> first request at the server (start-up)
    judging_s: float  # first request -> last answer (the calls themselves)
    after_last_s: float  # last answer sent -> exit (outputs written, interpreter torn down)
    requests: int
    ok: bool


def measure(
    src: Path, pool: Path, out: Path, fmt: str, conc: int, pairs: int, delay: float, pycache: Path
) -> tuple[Cell, float]:
    """A run into a fresh output, then a rerun into it (no call to make): both timed."""
    reply = Hang(delay, Reply("The passage answers it.\n##final score: 2"))
    with ScriptedLLMServer(lambda req: reply) as server:
        url = server.base_url if fmt == "anthropic" else server.openai_base_url
        res = run_judge(src, pool, out, fmt, conc, url, pycache)
        reqs = list(server.requests)
        again = run_judge(src, pool, out, fmt, conc, url, pycache)
        assert server.request_count == len(reqs), "a rerun into a finished output made calls"
    lowest = json.loads((out / "summary.json").read_text())["concurrency_lowest"]
    answered = [r.finished_at for r in reqs if r.outcome == "answered" and r.finished_at]
    ok = res.judged == pairs and not res.failed and len(reqs) == pairs and lowest == conc
    first = min(r.received_at for r in reqs)
    cell = Cell(
        res,
        first - res.started,
        max(answered) - first,
        res.ended - max(answered),
        len(reqs),
        ok,
    )
    return cell, again.wall_s


def import_s(modules: str, src: Path, pycache: Path, times: int = 3) -> float:
    """Median seconds a fresh interpreter takes to import ``modules`` (teardown not counted)."""
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONPYCACHEPREFIX": str(pycache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    code = f"import time; t = time.perf_counter(); import {modules}; print(time.perf_counter() - t)"
    took = [
        float(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True).stdout)
        for _ in range(times)
    ]  # fmt: skip
    return statistics.median(took)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=402)
    parser.add_argument("--delay", type=float, default=0.2, help="server answer time, seconds")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32, 64])
    parser.add_argument("--formats", nargs="+", default=["anthropic", "openai"])
    parser.add_argument("--baseline", help="git revision to measure in the same run")
    parser.add_argument(
        "--extra",
        action="append",
        default=[],
        metavar="LABEL=SRC",
        help="also measure the package in folder SRC (a src/ tree, e.g. the working tree with a "
        "patch applied), interleaved like the baseline",
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per cell (concurrency 1: once), median shown"
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench_judge_") as tmp:
        root = Path(tmp)
        pool = root / "pool.jsonl"
        write_pool(pool, args.pairs)
        versions = versions_to_measure(args.baseline, args.extra, root)

        print(f"nproc={os.cpu_count()} pairs={args.pairs} delay={args.delay}s "
              f"repeat={args.repeat} load average before: {os.getloadavg()[0]:.2f}")  # fmt: skip
        pycache = root / "pycache"
        for i, (_, src) in enumerate(versions):  # compile and cache byte-code once
            for fmt in args.formats:
                measure(src, pool, root / f"warm-{i}-{fmt}", fmt, 64, args.pairs, 0.0, pycache)
        print("| format | concurrency | version | wall s | ideal s | % of ideal | to 1st request s "
              "| 1st request to last answer s (% of ideal) | after last answer s | client CPU s "
              "| CPU ms/call |")  # fmt: skip
        print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        mismatches: list[str] = []
        reruns: dict[str, list[float]] = {name: [] for name, _ in versions}
        for fmt in args.formats:
            for conc in args.concurrency:
                cells: dict[str, list[Cell]] = {name: [] for name, _ in versions}
                outs: list[Path] = []
                for rep in range(1 if conc == 1 else args.repeat):
                    for i, (name, src) in enumerate(versions):  # interleaved: same load
                        out = root / f"{fmt}-{conc}-{rep}-{i}"
                        cell, rerun = measure(
                            src, pool, out, fmt, conc, args.pairs, args.delay, pycache
                        )
                        cells[name].append(cell)
                        reruns[name].append(rerun)
                        if rep == 0:
                            outs.append(out)
                if any(comparable(o) != comparable(outs[0]) for o in outs[1:]):
                    mismatches.append(f"{fmt} concurrency {conc}")
                ideal = args.pairs * args.delay / conc
                for name, runs in cells.items():
                    runs.sort(key=lambda c: c.result.wall_s)
                    c = runs[len(runs) // 2]  # the median run
                    bad = sum(not r.ok for r in runs)
                    note = f" ({bad} run(s) with failures or lowered concurrency)" if bad else ""
                    print(
                        f"| {fmt} | {conc} | {name}{note} | {c.result.wall_s:.2f} | {ideal:.2f} "
                        f"| {100 * ideal / c.result.wall_s:.0f}% | {c.first_request_s:.2f} "
                        f"| {c.judging_s:.2f} ({100 * ideal / c.judging_s:.0f}%) "
                        f"| {c.after_last_s:.2f} | {c.result.cpu_s:.2f} "
                        f"| {1000 * c.result.cpu_s / max(1, c.requests):.2f} |",
                        flush=True,
                    )
        print()
        for name, times in reruns.items():
            print(f"rerun into a finished output, no call made ({name}): median "
                  f"{statistics.median(times):.2f} s over {len(times)} reruns")  # fmt: skip
        for name, src in versions:
            modules = "rankscope.cli.app, rankscope.judge.judging"
            print(f"import {modules} in a fresh interpreter ({name}): median "
                  f"{import_s(modules, src, pycache):.2f} s")  # fmt: skip
        for modules in (*args.formats, "pandas"):
            print(f"import {modules} in a fresh interpreter: median "
                  f"{import_s(modules, versions[-1][1], pycache):.2f} s")  # fmt: skip
        if len(versions) >= 2:
            print("outputs identical (labels, hashes, tokens, cost, qrels): "
                  + ("yes" if not mismatches else "NO: " + ", ".join(mismatches)))  # fmt: skip
        print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
