"""Every engine on the Cranfield collection (BEIR copy), through the benchmark runner.

Starts a throwaway PostgreSQL cluster (with pgvector when installed) for the postgres and
pgvector engines and a Typesense server for the typesense engine (each left out when it cannot
start; anserini is left out without its jar or Java; elasticsearch / opensearch run only on the
clusters ``RANKSCOPE_ES_URL`` / ``RANKSCOPE_OPENSEARCH_URL`` name; see ``engine_lineup.py``),
writes a suite over ``data/cranfield/beir`` (or
``$RANKSCOPE_SHARED_DATA/cranfield/beir``), runs it and prints one row per engine: nDCG@10,
MAP, recall@100 and p50 latency, evaluated against ``beir/qrels/test.tsv`` (grades 1..4, 4
best).

    python bench/cranfield_engines.py [--out bench/out/cranfield] [--skip-dense]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cranfield_data import cranfield_beir
from engine_lineup import (
    EngineSpec,
    anserini_engines,
    cluster_engines,
    engine_servers,
    write_suite,
)

from rankscope.bench import run_benchmark
from rankscope.suite import load_suite

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(REPO / "bench" / "out" / "cranfield"))
    parser.add_argument("--skip-dense", action="store_true", help="lexical engines only")
    args = parser.parse_args()
    beir = cranfield_beir()
    engines: list[EngineSpec] = [
        {"name": "sqlite", "engine": "sqlite"},
        {"name": "tantivy", "engine": "tantivy"},
        {"name": "duckdb", "engine": "duckdb"},
        *anserini_engines(),
    ]
    dense = not args.skip_dense
    if dense:
        engines += [
            {"name": "vector", "engine": "vector"},
            {
                "name": "hybrid",
                "engine": "hybrid",
                "options": {"engines": [{"engine": "sqlite"}, {"engine": "vector"}]},
            },
            {
                "name": "rerank",
                "engine": "rerank",
                "options": {"engine": {"engine": "sqlite"}, "mode": "embedding", "depth": 100},
            },
        ]
    engines += cluster_engines()
    with engine_servers("cranfield", pgvector={} if dense else None) as served:
        suite_path = write_suite(
            Path(args.out) / "cranfield.yaml",
            {
                "name": "cranfield",
                "corpus": {"type": "beir", "path": str(beir), "split": "test"},
                "settings": {"k": [10], "max_k": 100, "warmup": 1, "repeats": 3},
                "engines": engines + served,
            },
        )
        result = run_benchmark(load_suite(suite_path), args.out, resume=False)
    print(f"{'engine':<10} {'nDCG@10':>8} {'MAP':>7} {'R@100':>7} {'p50 ms':>8} {'index s':>8}")
    for c in result.configurations:
        if not c.ok:
            print(f"{c.name:<10} FAILED: {c.error}")
            continue
        scores = c.view("all")
        s = {m: v or 0.0 for m, v in scores.summary.items()}
        print(
            f"{c.name:<10} {s['ndcg@10']:8.4f} {s['map']:7.4f} {s['recall@100']:7.4f} "
            f"{scores.latency.p50_ms or 0.0:8.3f} {c.index_time_s or 0.0:8.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
