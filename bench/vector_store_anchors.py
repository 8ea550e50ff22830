"""ann_recall@10 of the vector-store suite beside the recall that ann-benchmarks and VectorDBBench
define, computed on the same data: the benchmark's own output folder.

For each vector configuration of ``examples/vector-stores/suite.yaml`` (run first with
``rankscope bench examples/vector-stores/suite.yaml --out bench/out/vector-stores``) this reads
the engine's first 10 units per query (``ann/<config>.units.trec``), embeds the corpus (from the
embedding cache) and the queries with the suite's model, and computes per query:

- rankscope's ``ann_recall@10`` (as results.json holds it: the exact top 10 and any unit tied
  with the 10th within 1e-6 of cosine);
- ann-benchmarks' "k-nn" recall: the share of the 10 returned whose true distance (here
  ``1 - cosine``, recomputed from the vectors, not the store's score) is at most the 10th true
  distance + 1e-3;
- VectorDBBench's recall: the share of the 10 returned that are among the exact 10 (set overlap,
  no tolerance).

Usage: ``python bench/vector_store_anchors.py [OUT_DIR]`` (default bench/out/vector-stores).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from rankscope.bench.results import read_results
from rankscope.data import read_run
from rankscope.engines.embeddings import make_embedder
from rankscope.suite import load_suite

K = 10
SUITE = Path("examples/vector-stores/suite.yaml")


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("bench/out/vector-stores")
    result = read_results(out)
    suite = load_suite(SUITE)
    docs = list(suite.corpus())
    embedder = make_embedder(None)
    matrix = embedder.embed_documents([d.text.strip() for d in docs])
    row = {d.id: i for i, d in enumerate(docs)}
    texts = {q.id: q.text for q in suite.queries}
    vectors = {q: embedder.embed_queries([t])[0] for q, t in texts.items()}
    scores = {q: matrix @ v for q, v in vectors.items()}
    print(
        f"| configuration | rankscope ann_recall@{K} | ann-benchmarks k-nn recall (eps 1e-3) "
        f"| VectorDBBench recall | queries where they differ |"
    )
    print("|---|---:|---:|---:|---:|")
    for config in result.successful:
        if config.ann_units_file is None or config.per_query is None:
            continue
        units = read_run(out / config.ann_units_file)
        ours = config.per_query.ann_recall[f"ann_recall@{K}"]
        annb, vdb, differ = [], [], 0
        for i, q in enumerate(result.query_ids):
            if ours[i] is None:
                continue
            s = scores[q]
            got = [row[u] for u, _ in units.ranking(q)][:K]
            kth_distance = 1.0 - float(np.sort(s)[::-1][K - 1])
            a = sum(1 for r in got if 1.0 - float(s[r]) <= kth_distance + 1e-3) / K
            exact = set(np.argsort(-s, kind="stable")[:K].tolist())
            v = len(exact & set(got)) / K
            annb.append(a)
            vdb.append(v)
            differ += int(not (a == v == ours[i]))
        mean = float(np.mean([x for x in ours if x is not None]))
        print(
            f"| {config.name} | {mean:.4f} | {np.mean(annb):.4f} | {np.mean(vdb):.4f} | "
            f"{differ} of {len(annb)} |"
        )


if __name__ == "__main__":
    main()
