"""Start-up of the rankscope command: short commands end to end, versions alternated in one run.

A command on small inputs is mostly start-up: the interpreter, imports, argument parsing and the
first use of numpy and pyarrow. Each command runs as a fresh subprocess, ``--repeat`` times per
version, versions alternated run by run so that all see the same load; printed: the median wall
time and the median CPU seconds (user + sys of the subprocess, steadier than wall on a shared
machine). The outputs of every version must be identical (checked). Byte-code is compiled in a
warm-up run first and cached in a temporary folder, as for an installed package.

``--baseline REV`` adds the code of a git revision (``git archive REV src``); ``--extra
LABEL=SRC`` any further ``src`` tree (the working tree with a patch not yet committed, say).

    python bench/bench_startup.py --baseline 1dff4c0 --repeat 15
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_judge import versions_to_measure

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
CRANFIELD = REPO / "data" / "cranfield" / "runs" / "stevinjs_CS7IS3-CA1"


def commands() -> list[tuple[str, list[str]]]:
    """(label, argv after ``python``) of the commands timed."""
    qrels, bm25, dense = (str(EXAMPLES / n) for n in ("qrels.txt", "bm25.run", "dense.run"))
    cmds = [
        # the floor: what a command on a small file cannot avoid
        ("python -c 'import numpy, pyarrow'", ["-c", "import numpy, pyarrow"]),
        ("python -c 'import rankscope'", ["-c", "import rankscope"]),
        ("python -c 'import rankscope.cli.app'", ["-c", "import rankscope.cli.app"]),
        ("rankscope --version", ["-m", "rankscope", "--version"]),
        ("rankscope --help", ["-m", "rankscope", "--help"]),
        ("rankscope eval --help", ["-m", "rankscope", "eval", "--help"]),
        (
            "rankscope trec_eval examples/qrels.txt examples/bm25.run",
            ["-m", "rankscope", "trec_eval", qrels, bm25],
        ),
        (
            "rankscope eval examples/qrels.txt examples/bm25.run",
            ["-m", "rankscope", "eval", qrels, bm25],
        ),
        (
            "rankscope eval examples/qrels.txt examples/bm25.run examples/dense.run",
            ["-m", "rankscope", "eval", qrels, bm25, dense],
        ),
    ]
    if CRANFIELD.is_dir():  # 1,400 documents, 225 queries, two runs of 100 per query
        runs = [str(CRANFIELD / f"results_standard_{n}.txt") for n in ("bm25", "classic")]
        cmds.append(
            (
                "rankscope eval -m all_trec (Cranfield qrels, 2 runs of 22,500 lines)",
                ["-m", "rankscope", "eval", str(CRANFIELD / "qrel"), *runs, "-m", "all_trec"],
            )
        )
    return cmds


def run_once(src: Path, argv: list[str], pycache: Path) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + sys) and stdout of one run."""
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONPYCACHEPREFIX": str(pycache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["COLUMNS"] = "120"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *argv], env=env, capture_output=True, text=True, check=False, cwd=REPO
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed ({src}):\n{done.stdout}\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", help="git revision to measure in the same run")
    parser.add_argument("--extra", action="append", default=[], metavar="LABEL=SRC")
    parser.add_argument("--repeat", type=int, default=15, help="runs per command and version")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_startup_") as tmp:
        root = Path(tmp)
        versions = versions_to_measure(args.baseline, args.extra, root)
        pycache = root / "pycache"
        print(f"nproc={os.cpu_count()} repeat={args.repeat} "
              f"load average before: {os.getloadavg()[0]:.2f}")  # fmt: skip
        print("| command | version | wall s (median) | CPU s (median) |")
        print("|---|---|---:|---:|")
        mismatches: list[str] = []
        for label, argv in commands():
            outputs = {name: run_once(src, argv, pycache)[2] for name, src in versions}  # warm
            if len(set(outputs.values())) > 1:
                mismatches.append(label)
            times: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in versions}
            for _ in range(args.repeat):
                for name, src in versions:  # alternated: the same load for every version
                    wall, cpu, _ = run_once(src, argv, pycache)
                    times[name].append((wall, cpu))
            for name, runs in times.items():
                wall = statistics.median(w for w, _ in runs)
                cpu = statistics.median(c for _, c in runs)
                print(f"| `{label}` | {name} | {wall:.3f} | {cpu:.3f} |", flush=True)
        if len(versions) > 1:
            print(
                "outputs identical: "
                + ("yes" if not mismatches else "NO: " + ", ".join(mismatches))
            )
        print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
