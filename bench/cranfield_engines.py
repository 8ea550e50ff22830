"""Every engine on the Cranfield collection (BEIR copy), through the benchmark runner.

Starts a throwaway PostgreSQL cluster (with pgvector when installed) for the postgres and
pgvector engines and a Typesense server for the typesense engine (each left out when it cannot
start; anserini is left out without its jar or Java), writes a suite over
``../shared/data/cranfield/beir`` (or ``$RANKSCOPE_SHARED_DATA/cranfield/beir``), runs it and
prints one row per engine: nDCG@10, MAP, recall@100 and p50 latency, evaluated against
``beir/qrels/test.tsv`` (grades 1..4, 4 best).

    python bench/cranfield_engines.py [--out bench/out/cranfield] [--skip-dense]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rankscope.bench import run_benchmark
from rankscope.suite import load_suite
from rankscope.testing.pgcluster import PgCluster, PgClusterError

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(REPO / "bench" / "out" / "cranfield"))
    parser.add_argument("--skip-dense", action="store_true", help="lexical engines only")
    args = parser.parse_args()
    shared = Path(os.environ.get("RANKSCOPE_SHARED_DATA", REPO.parent / "shared" / "data"))
    beir = shared / "cranfield" / "beir"
    if not (beir / "corpus.jsonl").is_file():
        print(f"Cranfield BEIR copy not found under {beir}", file=sys.stderr)
        return 2
    engines = [
        "{name: sqlite, engine: sqlite}",
        "{name: tantivy, engine: tantivy}",
        "{name: duckdb, engine: duckdb}",
    ]
    # Lucene BM25 through Anserini: Anserini's defaults, and the configuration of the published
    # Lucene run in runs/ (StandardAnalyzer, k1 1.2, b 0.75)
    try:
        from rankscope.engines.anserini import find_jar, find_java_home

        if find_jar() is not None and find_java_home() is not None:
            engines += [
                "{name: anserini, engine: anserini}",
                "{name: anserini-lucene, engine: anserini, options: "
                "{analyzer: standard, k1: 1.2, b: 0.75}}",
            ]
        else:
            print("anserini left out: no Anserini jar or no Java", file=sys.stderr)
    except ImportError as exc:
        print(f"anserini left out: {exc}", file=sys.stderr)
    dense = not args.skip_dense
    if dense:
        engines += [
            "{name: vector, engine: vector}",
            "{name: hybrid, engine: hybrid, options: {engines: [{engine: sqlite}, "
            "{engine: vector}]}}",
            "{name: rerank, engine: rerank, options: {engine: {engine: sqlite}, "
            "mode: embedding, depth: 100}}",
        ]
    typesense = None
    try:
        from rankscope.testing.typesense import TypesenseServer, TypesenseServerError

        typesense = TypesenseServer.start()
        engines.append(
            f"{{name: typesense, engine: typesense, options: {{url: '{typesense.url}', "
            f"api_key: '{typesense.api_key}'}}}}"
        )
    except (ImportError, TypesenseServerError) as exc:
        print(f"typesense left out: {exc}", file=sys.stderr)
    cluster = None
    try:
        cluster = PgCluster.start()
        dsn = cluster.create_database("cranfield")
        engines.append(f"{{name: postgres, engine: postgres, options: {{dsn: '{dsn}'}}}}")
        if dense and "vector" in cluster.available_extensions():
            engines.append(f"{{name: pgvector, engine: pgvector, options: {{dsn: '{dsn}'}}}}")
    except PgClusterError as exc:
        print(f"PostgreSQL engines left out: {exc}", file=sys.stderr)
    try:
        suite_path = Path(args.out) / "cranfield.yaml"
        suite_path.parent.mkdir(parents=True, exist_ok=True)
        suite_path.write_text(
            "name: cranfield\n"
            f"corpus: {{type: beir, path: '{beir}', split: test}}\n"
            "settings: {k: [10], max_k: 100, warmup: 1, repeats: 3}\n"
            "engines:\n" + "".join(f"  - {e}\n" for e in engines)
        )
        result = run_benchmark(load_suite(suite_path), args.out, resume=False)
    finally:
        if cluster is not None:
            cluster.stop()
        if typesense is not None:
            typesense.stop()
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
