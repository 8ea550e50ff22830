"""Generate deterministic benchmark data: a large TREC run and matching qrels.

Writes ``bench/data/run.txt`` (space separated), ``bench/data/run.tsv`` (tab separated, with
``--tab``) and ``bench/data/qrels.txt``. Defaults: 10,000 queries x 1,000 retrieved documents,
30 judged documents per query with grades 0-3, of which some were not retrieved.

The run is sorted by query (numerically, as most tools write it, which is not trec_eval's byte
order) and then by rank; within a run of tied scores the documents are in random order, as
search engines leave them. Usage::

    python bench/make_data.py [--queries 10000] [--depth 1000] [--judged 30] [--seed 42] [--tab]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

CORPUS_SIZE = 2_000_000


def _unique_docs(rng: np.random.Generator, queries: int, k: int) -> np.ndarray:
    """``queries`` rows of ``k`` distinct document numbers, in random order."""
    extra = k // 10 + 16
    draws = np.sort(rng.integers(0, CORPUS_SIZE, size=(queries, k + extra)), axis=1)
    dup = np.zeros_like(draws, dtype=bool)
    dup[:, 1:] = draws[:, 1:] == draws[:, :-1]
    # Push repeats to the end of each row, then keep the first k (all distinct).
    order = np.argsort(dup, axis=1, kind="stable")
    docs = np.take_along_axis(draws, order, axis=1)[:, :k]
    if np.any(np.sort(docs, axis=1)[:, 1:] == np.sort(docs, axis=1)[:, :-1]):
        raise RuntimeError("not enough distinct documents drawn; raise the extra draws")
    shuffle = np.argsort(rng.random(docs.shape), axis=1)
    return np.take_along_axis(docs, shuffle, axis=1)


def _docnos(numbers: np.ndarray) -> pa.Array:
    digits = pc.utf8_lpad(pa.array(numbers.ravel()).cast(pa.string()), 7, "0")
    return pc.binary_join_element_wise("D", digits, "")


def _write_lines(path: Path, columns: list[pa.Array], sep: str) -> None:
    lines = pc.binary_join_element_wise(*columns, sep)
    with path.open("wb") as out:
        step = 1_000_000
        for lo in range(0, len(lines), step):
            chunk = lines.slice(lo, step).to_pylist()
            out.write(("\n".join(chunk) + "\n").encode())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--depth", type=int, default=1_000)
    ap.add_argument("--judged", type=int, default=30)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--tab", action="store_true", help="also write a tab-separated run.tsv")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "data")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    nq, k = args.queries, args.depth
    args.out.mkdir(parents=True, exist_ok=True)

    qids = np.arange(1, nq + 1)
    docs = _unique_docs(rng, nq, k)
    # Scores on a 0.001 grid give realistic ties (about 1-2% of adjacent pairs).
    scores = -np.sort(-np.round(rng.gamma(2.0, 5.0, size=(nq, k)), 3), axis=1)
    ranks = np.tile(np.arange(1, k + 1), nq)
    qcol = pa.array(np.repeat(qids, k)).cast(pa.string())
    score_col = pa.array(scores.ravel()).cast(pa.string())
    cols = [
        qcol,
        pa.array(["Q0"] * len(qcol)),
        _docnos(docs),
        pa.array(ranks).cast(pa.string()),
        score_col,
        pa.array(["bench"] * len(qcol)),
    ]
    _write_lines(args.out / "run.txt", cols, " ")
    if args.tab:
        _write_lines(args.out / "run.tsv", cols, "\t")

    # Judged: two thirds drawn from each query's top 100, the rest from outside the run.
    n_ret = (2 * args.judged) // 3
    n_unret = args.judged - n_ret
    top = np.argsort(rng.random((nq, min(100, k))), axis=1)[:, :n_ret]
    judged_ret = np.take_along_axis(docs[:, : min(100, k)], top, axis=1)
    judged_unret = CORPUS_SIZE + rng.integers(0, 10 * CORPUS_SIZE, size=(nq, n_unret))
    judged_unret = np.sort(judged_unret, axis=1)
    judged_unret[:, 1:] += np.cumsum(judged_unret[:, 1:] == judged_unret[:, :-1], axis=1)
    judged = np.concatenate([judged_ret, judged_unret], axis=1)
    grades = rng.choice(4, size=judged.shape, p=[0.5, 0.25, 0.15, 0.1])
    qcol = pa.array(np.repeat(qids, args.judged)).cast(pa.string())
    cols = [
        qcol,
        pa.array(["0"] * len(qcol)),
        _docnos(judged),
        pa.array(grades.ravel()).cast(pa.string()),
    ]
    _write_lines(args.out / "qrels.txt", cols, " ")
    print(f"wrote {args.out}: {nq} queries x {k} docs, {args.judged} judged per query")


if __name__ == "__main__":
    main()
