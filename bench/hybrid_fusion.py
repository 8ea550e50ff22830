"""Choose the demo's hybrid by measurement: RRF, weighted RRF and normalised score fusion.

Runs the demo suite's two hybrid members (sqlite BM25 and vector MiniLM, as configured in
``src/rankscope/demo/stdlib-docs.yaml``) once, then fuses their top-100 lists with the hybrid
engine's own code under each setting, on the queries every member answers. Writes one TREC run
per setting, the qrels of those queries and ``fusion.json`` to ``--out``, so every number can
be re-derived with ``rankscope eval``. Prints a table: nDCG@10 of each setting, its paired
difference to the best member with a 95% bootstrap interval, and a 5-fold cross-validated
estimate of "tune the setting on 4/5 of the queries, score it on the rest".

    PYTHONPATH=src python bench/hybrid_fusion.py --out bench/out/fusion
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from rankscope import evaluate
from rankscope.data import Qrels, Run, write_qrels, write_run
from rankscope.demo import SUITE_PATH
from rankscope.engines import Document, Engine, Hit, Query, create_engine
from rankscope.engines.hybrid import HybridEngine
from rankscope.suite import load_suite

DEPTH = 100
MEASURE = "ndcg@10"
SEED = 0


class Memo(Engine):
    """Answers with a live engine's hits, computed once per query (the fusions reuse them)."""

    name = "memo"

    def __init__(self, inner: Engine) -> None:
        self.inner = inner
        self.supported_kinds = inner.supported_kinds  # type: ignore[misc]
        self.hits: dict[tuple[str, int], list[Hit]] = {}

    def index(self, docs: Iterable[Document]) -> None:
        self.inner.index(docs)

    def _search(self, query: Query, k: int) -> list[Hit]:
        key = (query.id, k)
        if key not in self.hits:
            self.hits[key] = self.inner.search(query, k)
        return self.hits[key]


def settings() -> dict[str, dict[str, Any]]:
    grid: dict[str, dict[str, Any]] = {"rrf": {"fusion": "rrf"}}
    for a in (0.2, 0.3, 0.4):
        grid[f"rrf-a{a}"] = {"fusion": "rrf", "alpha": a}
    for norm in ("minmax", "zscore"):
        for a in (0.1, 0.2, 0.3, 0.4, 0.5):
            grid[f"{norm}-a{a}"] = {"fusion": "weighted", "normalization": norm, "alpha": a}
    return grid


def bootstrap_ci(
    diff: np.ndarray, rng: np.random.Generator, n: int = 10_000
) -> tuple[float, float]:
    idx = rng.integers(0, len(diff), size=(n, len(diff)))
    means = diff[idx].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def cross_validated(per_query: dict[str, np.ndarray], names: list[str], folds: int) -> float:
    """Mean held-out score when the setting is chosen by mean score on the other folds."""
    n = len(next(iter(per_query.values())))
    order = np.random.default_rng(SEED).permutation(n)
    held = np.zeros(n)
    for f in range(folds):
        test = order[f::folds]
        train = np.setdiff1d(order, test)
        best = max(names, key=lambda s: per_query[s][train].mean())
        held[test] = per_query[best][test]
    return float(held.mean())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    out: Path = args.out
    (out / "runs").mkdir(parents=True, exist_ok=True)

    suite = load_suite(SUITE_PATH)
    docs = suite.documents()
    members = {
        "sqlite": Memo(create_engine("sqlite")),
        "vector": Memo(create_engine("vector", fields=["text"])),
    }
    for engine in members.values():
        engine.index(docs)
    kinds = frozenset.intersection(*(e.supported_kinds for e in members.values()))
    queries = [q for q in suite.queries if q.kind in kinds]
    qids = [q.id for q in queries]
    all_qrels = suite.qrels().to_dict()
    qrels = Qrels.from_dict({q: all_qrels[q] for q in qids if q in all_qrels})
    write_qrels(qrels, out / "qrels.txt")

    def run_of(engine: Engine, name: str) -> Path:
        ranking = {q.id: {h.doc_id: h.score for h in engine.search(q, DEPTH)} for q in queries}
        path = out / "runs" / f"{name}.trec"
        write_run(Run.from_dict({q: r for q, r in ranking.items() if r}, name=name), path)
        return path

    paths = {name: run_of(engine, name) for name, engine in members.items()}
    grid = settings()
    for name, options in grid.items():
        hybrid = HybridEngine(list(members.values()), **options)
        paths[name] = run_of(hybrid, name)  # not closed: that would close the shared members

    results = evaluate(qrels, {n: str(p) for n, p in paths.items()}, MEASURE,
                       average_over_qrels=True)  # fmt: skip
    per_query = {
        name: np.array([results.per_query(name).get(q, {}).get(MEASURE, 0.0) for q in qids])
        for name in paths
    }
    best_member = max(members, key=lambda m: per_query[m].mean())
    rng = np.random.default_rng(SEED)
    rows: list[dict[str, Any]] = []
    for name in paths:
        diff = per_query[name] - per_query[best_member]
        lo, hi = bootstrap_ci(diff, rng)
        rows.append(
            {
                "setting": name,
                "options": grid.get(name, {"engine": name}),
                MEASURE: float(per_query[name].mean()),
                "diff_vs_best_member": float(diff.mean()),
                "ci95": [lo, hi],
                "wins": int((diff > 0).sum()),
                "losses": int((diff < 0).sum()),
            }
        )
    cv = {
        "all settings": cross_validated(per_query, list(grid), 5),
        "minmax alpha": cross_validated(per_query, [n for n in grid if n.startswith("minmax")], 5),
        "zscore alpha": cross_validated(per_query, [n for n in grid if n.startswith("zscore")], 5),
        "rrf weight": cross_validated(per_query, [n for n in grid if n.startswith("rrf")], 5),
    }
    summary = {
        "suite": suite.name,
        "queries": len(qids),
        "measure": MEASURE,
        "best_member": best_member,
        "rows": rows,
        "cross_validated_5fold": cv,
    }
    (out / "fusion.json").write_text(json.dumps(summary, indent=2) + "\n")

    print(f"{suite.name}: {len(qids)} queries answered by every member; {MEASURE}; "
          f"differences vs {best_member}, 95% paired bootstrap interval")  # fmt: skip
    print(f"| setting | {MEASURE} | vs {best_member} | 95% CI | wins/losses |")
    print("|---|---|---|---|---|")
    for r in rows:
        lo, hi = r["ci95"]
        print(f"| {r['setting']} | {r[MEASURE]:.4f} | {r['diff_vs_best_member']:+.4f} | "
              f"[{lo:+.4f}, {hi:+.4f}] | {r['wins']}/{r['losses']} |")  # fmt: skip
    for what, value in cv.items():
        print(f"5-fold CV, tuning {what}: {value:.4f}")
    for engine in members.values():
        engine.inner.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
