"""Peak memory and index time of ``rankscope bench`` against the raw engine, in fresh processes.

For every corpus made by ``bench/make_corpus.py`` and every engine (sqlite, tantivy) this runs,
each in a fresh Python process whose peak resident set size comes from ``wait4``:

- **raw**: the engine alone, fed straight from the JSONL file: ``json.loads`` per line into an
  in-memory FTS5 table with rankscope's columns and tokenizer (sqlite), or into an in-RAM tantivy
  index with rankscope's schema and analyzer (tantivy), then the index committed. Its time is
  reading plus indexing, and its peak is the engine's own footprint (plus the interpreter);
- **rankscope**: ``rankscope bench suite.yaml --configuration <engine> --fresh`` on the same
  corpus (200 queries, no warm-up, one timed pass), its index time read from ``results.json``
  (which, the corpus being streamed into the engine, also includes reading it);
- **both**: one ``rankscope bench`` running both configurations, one after the other, to show
  that the second does not stack on the first.

``--before`` also runs rankscope from another source tree, alternating with this one (for a
before/after comparison: ``git archive <rev> src | tar -x -C /tmp/before``). Usage::

    python bench/make_corpus.py --docs 10000 100000
    python bench/bench_memory.py --docs 10000 100000 [--before /tmp/before/src]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DATA = HERE / "data"
ENGINES = ("sqlite", "tantivy")


def _lines(corpus: Path) -> Iterator[dict[str, str]]:
    with corpus.open("rb") as handle:
        for line in handle:
            yield json.loads(line)


def raw_sqlite(corpus: Path) -> float:
    import sqlite3

    started = time.perf_counter()
    conn = sqlite3.connect(":memory:")
    with conn:
        conn.execute(
            "CREATE VIRTUAL TABLE t USING fts5(doc_id UNINDEXED, c0, c1, "
            "tokenize='porter unicode61')"
        )
        conn.executemany(
            "INSERT INTO t VALUES (?, ?, ?)",
            ((d["_id"], d.get("title") or "", d.get("text") or "") for d in _lines(corpus)),
        )
    elapsed = time.perf_counter() - started
    conn.close()
    return elapsed


def raw_tantivy(corpus: Path) -> float:
    import tantivy as tv

    started = time.perf_counter()
    builder = tv.TextAnalyzerBuilder(tv.Tokenizer.simple())
    builder = builder.filter(tv.Filter.remove_long(40)).filter(tv.Filter.lowercase())
    analyzer = builder.filter(tv.Filter.stemmer("english")).build()
    sb = tv.SchemaBuilder()
    sb.add_text_field("doc_id", stored=True, tokenizer_name="raw")
    for name in ("f0", "f1"):
        sb.add_text_field(name, tokenizer_name="a", index_option="position")
    index = tv.Index(sb.build())
    index.register_tokenizer("a", analyzer)
    writer = index.writer(heap_size=50_000_000, num_threads=1)
    for d in _lines(corpus):
        writer.add_document(
            tv.Document(doc_id=d["_id"], f0=d.get("title") or "", f1=d.get("text") or "")
        )
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return time.perf_counter() - started


def run_child(cmd: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Peak RSS (MB) and stdout of ``cmd``, run in a fresh process and reaped with wait4."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise SystemExit(
                f"{' '.join(cmd)} failed ({proc.returncode}):\n{err.read().decode()[-3000:]}"
            )
        return round(usage.ru_maxrss / 1024), out.read().decode()


def rankscope_run(
    folder: Path, configs: list[str], src: Path, python: str
) -> tuple[int, dict[str, float]]:
    """Peak RSS (MB) of a ``rankscope bench`` run and each configuration's index time."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    with tempfile.TemporaryDirectory(prefix="rankscope-mem-") as out:
        cmd = [python, "-m", "rankscope", "bench", str(folder / "suite.yaml"), "--out", out]
        cmd += [a for c in configs for a in ("--configuration", c)]
        cmd += ["--fresh", "--quiet", "-f", "json"]
        peak, _ = run_child(cmd, env)
        results = json.loads((Path(out) / "results.json").read_text())
    times = {c["name"]: float(c["index_time_s"]) for c in results["configurations"]}
    return peak, times


def raw_run(folder: Path, engine: str, python: str) -> tuple[int, float]:
    cmd = [python, __file__, "--raw", engine, str(folder / "corpus.jsonl")]
    peak, out = run_child(cmd, dict(os.environ))
    return peak, float(out.strip().splitlines()[-1])


def _cells(runs: list[tuple[int, float]], raw_peak: int, raw_s: float) -> str:
    """Largest peak, fastest index time, and both against the raw engine's."""
    peak, index_s = max(p for p, _ in runs), min(t for _, t in runs)
    return f"{peak:,} | {index_s:.2f} | {peak - raw_peak:+,} | {index_s / raw_s - 1:+.1%}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--engines", nargs="+", default=list(ENGINES), choices=ENGINES)
    ap.add_argument("--repeats", type=int, default=3, help="alternating runs of each (min time)")
    ap.add_argument("--src", type=Path, default=REPO / "src", help="rankscope source tree")
    ap.add_argument(
        "--before", type=Path, help="another source tree (the code before), run alternately"
    )
    ap.add_argument("--no-both", action="store_true", help="skip the both-engines run")
    ap.add_argument("--raw", nargs=2, metavar=("ENGINE", "CORPUS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.raw:
        engine, corpus = args.raw
        print(f"{(raw_sqlite if engine == 'sqlite' else raw_tantivy)(Path(corpus)):.6f}")
        return
    python = sys.executable
    trees = {"rankscope": args.src.resolve()}
    if args.before is not None:
        trees = {"before": args.before.resolve(), **trees}
    shown = ", ".join(
        f"{label} from {src.relative_to(REPO) if src.is_relative_to(REPO) else src}"
        for label, src in trees.items()
    )
    print(
        f"nproc {os.cpu_count()}; {shown}; {args.repeats} alternating runs of each: peak = "
        "largest ru_maxrss, index time = fastest"
    )
    head = "| documents | JSONL MB | engine | raw peak MB | raw index s |"
    rule = "|---:|---:|---|---:|---:|"
    for label in trees:
        head += f" {label} peak MB | {label} index s | peak over raw MB | index vs raw |"
        rule += "---:|---:|---:|---:|"
    print(head)
    print(rule)
    for docs in args.docs:
        folder = DATA / f"corpus-{docs}"
        if not (folder / "suite.yaml").is_file():
            raise SystemExit(f"{folder} is missing: run python bench/make_corpus.py --docs {docs}")
        size = (folder / "corpus.jsonl").stat().st_size / 1e6
        raw_peaks: dict[str, int] = {}
        for engine in args.engines:
            raws: list[tuple[int, float]] = []
            ours: dict[str, list[tuple[int, float]]] = {label: [] for label in trees}
            for _ in range(args.repeats):
                raws.append(raw_run(folder, engine, python))
                for label, src in trees.items():
                    peak, times = rankscope_run(folder, [engine], src, python)
                    ours[label].append((peak, times[engine]))
            raw_peak, raw_s = max(p for p, _ in raws), min(t for _, t in raws)
            raw_peaks[engine] = raw_peak
            row = f"| {docs:,} | {size:,.0f} | {engine} | {raw_peak:,} | {raw_s:.2f} |"
            for runs in ours.values():
                row += f" {_cells(runs, raw_peak, raw_s)} |"
            print(row, flush=True)
        if not args.no_both and len(args.engines) > 1:
            largest = max(raw_peaks.values())
            both = " + ".join(args.engines)
            row = f"| {docs:,} | {size:,.0f} | {both}, one run | {largest:,} | |"
            for src in trees.values():
                peak, times = rankscope_run(folder, list(args.engines), src, python)
                spent = ", ".join(f"{t:.2f}" for t in times.values())
                row += f" {peak:,} | {spent} | {peak - largest:+,} | |"
            print(row, flush=True)


if __name__ == "__main__":
    main()
