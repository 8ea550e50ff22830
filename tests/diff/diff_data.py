"""Shared inputs of the diff tests: the shipped examples, Cranfield's two Lucene runs, and a
benchmark of those runs on Cranfield's BEIR copy (``run_file`` engines: nothing to index)."""

from __future__ import annotations

from pathlib import Path

from prerequisites import shared_data_root

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = REPO_ROOT / "examples"


CRANFIELD = shared_data_root() / "cranfield"
LUCENE = CRANFIELD / "runs" / "stevinjs_CS7IS3-CA1"
#: the qrels the Lucene runs were scored against (codes remapped, -1 -> 5: every pair relevant)
LUCENE_QRELS = LUCENE / "qrel"
BM25 = LUCENE / "results_standard_bm25.txt"
CLASSIC = LUCENE / "results_standard_classic.txt"
HAVE_CRANFIELD = BM25.is_file() and (CRANFIELD / "beir" / "corpus.jsonl").is_file()


def cranfield_bench(folder: Path, *, quiet: bool = True) -> Path:
    """Run the benchmark of the two Lucene runs over Cranfield's BEIR copy (its own qrels,
    grades 0-4) in ``folder``; returns the output folder."""
    from rankscope.bench import run_benchmark
    from rankscope.suite import load_suite

    folder.mkdir(parents=True, exist_ok=True)
    suite = folder / "cranfield.yaml"
    suite.write_text(
        "name: cranfield\n"
        "description: two Lucene runs on Cranfield\n"
        f"corpus: {{type: beir, path: {CRANFIELD / 'beir'}, split: test}}\n"
        "settings: {k: [10], max_k: 50, warmup: 0, repeats: 1}\n"
        "engines:\n"
        f"  - {{name: bm25, engine: run_file, options: {{path: {BM25}}}}}\n"
        f"  - {{name: classic, engine: run_file, options: {{path: {CLASSIC}}}}}\n"
    )
    out = folder / "out"
    run_benchmark(load_suite(suite), out)
    return out
