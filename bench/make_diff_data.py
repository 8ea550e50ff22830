"""Generate deterministic data for ``rankscope diff``: qrels and two runs of the same queries.

Writes ``qrels.txt``, ``a.run`` and ``b.run`` under ``--out`` (default ``bench/data/diff``).
Defaults: 1,000,000 queries x 10 retrieved documents, 6 judged documents per query (grades
0-3; some not retrieved). Run B reranks A's documents with noisy scores and, in a third of the
queries, swaps its last document for one A lacks, so queries win, lose and tie. Usage::

    python bench/make_diff_data.py [--queries 1000000] [--depth 10] [--judged 6] [--seed 7]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def _docnos(numbers: np.ndarray) -> pa.Array:
    digits = pc.utf8_lpad(pa.array(numbers.ravel()).cast(pa.string()), 8, "0")
    return pc.binary_join_element_wise("D", digits, "")


def _write(path: Path, columns: list[pa.Array]) -> None:
    lines = pc.binary_join_element_wise(*columns, " ")
    with path.open("wb") as out:
        step = 1_000_000
        for lo in range(0, len(lines), step):
            out.write(("\n".join(lines.slice(lo, step).to_pylist()) + "\n").encode())


def _run(qids: np.ndarray, docs: np.ndarray, scores: np.ndarray, name: str) -> list[pa.Array]:
    nq, k = docs.shape
    order = np.argsort(-scores, axis=1, kind="stable")
    docs = np.take_along_axis(docs, order, axis=1)
    scores = np.take_along_axis(scores, order, axis=1)
    n = nq * k
    return [
        pa.array(np.repeat(qids, k)).cast(pa.string()),
        pa.array(np.full(n, "Q0")),
        _docnos(docs),
        pa.array(np.tile(np.arange(1, k + 1), nq)).cast(pa.string()),
        pa.array(np.round(scores.ravel(), 4)).cast(pa.string()),
        pa.array(np.full(n, name)),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=1_000_000)
    ap.add_argument("--depth", type=int, default=10)
    ap.add_argument("--judged", type=int, default=6)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "data" / "diff")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    nq, k = args.queries, args.depth
    args.out.mkdir(parents=True, exist_ok=True)
    qids = np.arange(1, nq + 1)
    # documents of query q are numbered q * (k + 2) + j: distinct within and across queries
    base = (qids * (k + 2))[:, None]
    docs_a = base + np.arange(k)[None, :]
    scores_a = np.sort(rng.gamma(2.0, 5.0, size=(nq, k)), axis=1)[:, ::-1]
    scores_b = scores_a + rng.normal(0.0, 2.0, size=(nq, k))
    docs_b = docs_a.copy()
    swap = rng.random(nq) < 1 / 3
    docs_b[swap, -1] = base[swap, 0] + k  # a document A does not retrieve
    _write(args.out / "a.run", _run(qids, docs_a, scores_a, "a"))
    _write(args.out / "b.run", _run(qids, docs_b, scores_b, "b"))
    # judged: random documents among the k + 2 of each query (two are never retrieved by A)
    judged = np.argsort(rng.random((nq, k + 2)), axis=1)[:, : args.judged] + base
    grades = rng.choice(4, size=judged.shape, p=[0.4, 0.3, 0.2, 0.1])
    _write(
        args.out / "qrels.txt",
        [
            pa.array(np.repeat(qids, args.judged)).cast(pa.string()),
            pa.array(np.full(judged.size, "0")),
            _docnos(judged),
            pa.array(grades.ravel()).cast(pa.string()),
        ],
    )
    print(f"wrote {args.out}: {nq} queries x {k} docs, {args.judged} judged per query")


if __name__ == "__main__":
    main()
