"""Every engine on the demo's suite (stdlib docs), through the benchmark runner.

The suite is the one ``rankscope demo`` runs (``rankscope.demo.SUITE_PATH``: its corpus of
docstrings built from this interpreter, its queries and judgments, its settings: k, repeats,
warmup, unsupported queries skipped) with its five configurations, and beside them every other
engine that can run here (``engine_lineup.py``): duckdb, anserini (with its jar and Java),
postgres and pgvector on a throwaway PostgreSQL cluster, typesense on a local server, and
elasticsearch / opensearch on the clusters ``RANKSCOPE_ES_URL`` / ``RANKSCOPE_OPENSEARCH_URL``
name. The suite it ran is written to ``OUT/demo-engines.yaml``; the output folder holds
results.json, the run files and the comparison statistics, as ``rankscope bench`` writes them.
Prints the comparison as ``rankscope demo`` does (table, notes, recommendations), over the
queries every configuration answered, then over every judged query (a skipped one scoring 0).

    python bench/demo_engines.py [--out bench/out/demo-engines] [--lexical-only]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import yaml
from engine_lineup import (
    EngineSpec,
    anserini_engines,
    cluster_engines,
    engine_servers,
    write_suite,
)
from rich.console import Console

from rankscope.bench import run_benchmark
from rankscope.demo import SUITE_PATH
from rankscope.report import render_table
from rankscope.suite import embeddings_available, load_suite

REPO = Path(__file__).resolve().parents[1]


def demo_suite() -> dict[str, Any]:
    """The demo's suite file as a mapping (``rankscope demo`` loads the same file)."""
    data = yaml.safe_load(SUITE_PATH.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    # as `rankscope demo`: engines that cannot express a query kind skip it, and are compared
    # over the queries every configuration answered
    data.setdefault("settings", {})["unsupported_queries"] = "skip"
    return data


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(REPO / "bench" / "out" / "demo-engines"))
    parser.add_argument(
        "--lexical-only", action="store_true", help="leave out the dense and hybrid engines"
    )
    args = parser.parse_args()
    out = Path(args.out)
    # the demo never downloads: the embedding model must already be installed
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    dense = not args.lexical_only and embeddings_available()
    if not dense and not args.lexical_only:
        print("no embedding backend installed: lexical engines only", file=sys.stderr)

    suite = demo_suite()
    engines: list[EngineSpec] = suite["engines"]
    if not dense:
        dense_names = {c.name for c in load_suite(SUITE_PATH).configs if c.needs_embeddings}
        engines = [e for e in engines if e["name"] not in dense_names]
    engines += [{"name": "duckdb", "engine": "duckdb"}, *anserini_engines({"anserini": {}})]
    engines += cluster_engines()
    # pgvector as the demo's vector-minilm: the default MiniLM over the text field only
    pgvector = {"embed_fields": ["text"]} if dense else None
    started = time.perf_counter()
    with engine_servers("demo", pgvector=pgvector) as served:
        suite["engines"] = engines + served
        path = write_suite(out / "demo-engines.yaml", suite)
        result = run_benchmark(load_suite(path), out, resume=False)
    elapsed = time.perf_counter() - started

    console = Console(width=250)
    render_table(result, console)
    if result.default_view != "all":
        console.print()
        render_table(result, console, view="all")
    print(f"\n{len(result.configurations)} configurations in {elapsed:.1f} s; output in {out}")
    return 3 if result.failures else 0


if __name__ == "__main__":
    sys.exit(main())
