"""Parse timing: ``rankscope.data.read_run`` against pyarrow's bare CSV reader on the same file.

Each round runs, in fresh subprocesses and alternating, (a) pyarrow.csv reading the qid, docno and
score columns with no checks at all (a floor for any pyarrow-based reader) and (b)
``read_run`` (checks, trec_eval ordering, duplicate detection, run assembly). The ratio b/a
stays meaningful when other work shares the machine; the minimum over rounds is the least
disturbed measurement. The one-time cost of pyarrow importing pandas (it does so on its first
array construction when pandas is installed) is measured apart and excluded from both.

Usage::

    python bench/make_data.py --tab
    python bench/bench_parse.py [--files bench/data/run.txt bench/data/run.tsv] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

_CHILD = r"""
import json, resource, sys, time
import pyarrow as pa
t = time.perf_counter(); c = time.process_time()
pa.array([1])  # pyarrow imports pandas here when it is installed
pandas_wall, pandas_cpu = time.perf_counter() - t, time.process_time() - c
import pyarrow.csv as pcsv
from rankscope.data import read_run
path, mode = sys.argv[1], sys.argv[2]
t = time.perf_counter(); c = time.process_time()
if mode == "pyarrow":
    sep = "\t" if b"\t" in open(path, "rb").readline() else " "
    table = pcsv.read_csv(
        path,
        read_options=pcsv.ReadOptions(autogenerate_column_names=True),
        parse_options=pcsv.ParseOptions(delimiter=sep, quote_char=False),
        convert_options=pcsv.ConvertOptions(include_columns=["f0", "f2", "f4"]),
    )
    rows = table.num_rows
else:
    rows = len(read_run(path))
print(json.dumps({
    "wall": time.perf_counter() - t, "cpu": time.process_time() - c, "rows": rows,
    "pandas_import_wall": pandas_wall, "pandas_import_cpu": pandas_cpu,
    "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
"""


def _child(path: Path, mode: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), mode],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", nargs="+", type=Path, default=[here / "data" / "run.txt"])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path, default=here / "PARSE_RESULTS.md")
    args = ap.parse_args()
    lines = [
        "# Run parsing benchmark",
        "",
        f"`nproc` = {os.cpu_count()}; load average at start: {os.getloadavg()[0]:.1f}.",
        "Command: `" + " ".join([Path(sys.executable).name, *sys.argv]) + "`",
        "",
        "| file | reader | min wall (s) | min CPU (s) | peak RSS (MiB) | read_run / pyarrow |",
        "|---|---|---:|---:|---:|---:|",
    ]
    pandas_cpu: list[float] = []
    for path in args.files:
        runs: dict[str, list[dict[str, float]]] = {"pyarrow": [], "read_run": []}
        for _ in range(args.rounds):
            for mode in runs:
                r = _child(path, mode)
                runs[mode].append(r)
                pandas_cpu.append(r["pandas_import_cpu"])
                print(path.name, mode, json.dumps(r), file=sys.stderr, flush=True)
        best = {m: min(rs, key=lambda r: r["wall"]) for m, rs in runs.items()}
        ratio = best["read_run"]["wall"] / best["pyarrow"]["wall"]
        size = path.stat().st_size / 2**20
        for mode, r in best.items():
            shown = f"{ratio:.2f}" if mode == "read_run" else ""
            lines.append(
                f"| {path.name} ({int(r['rows']):,} rows, {size:.0f} MiB) | {mode} | "
                f"{r['wall']:.2f} | {min(x['cpu'] for x in runs[mode]):.2f} | "
                f"{r['maxrss_mb']:.0f} | {shown} |"
            )
    lines += [
        "",
        f"pyarrow's first array construction imported pandas in {min(pandas_cpu):.2f} s CPU "
        "(min over runs), outside the timings above.",
        f"Load average at the end: {os.getloadavg()[0]:.1f}.",
        "",
    ]
    args.out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
