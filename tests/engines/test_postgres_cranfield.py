"""Quality smoke check: the ``postgres`` engine on Cranfield (1400 abstracts, 225 queries).

Reads the BEIR copy of the shared data (query ids are positions in cran.qry, which is what the
qrels use; grades 4 = complete answer .. 1 = minimum interest, 0 = judged non-relevant) and
scores the run with :func:`rankscope.evaluate`, cross-checked against pytrec_eval. The ranking
is deterministic: MAP and nDCG@10 are pinned to 1e-4 (observed with PostgreSQL 15); a broken
translation lands far away (AND-ing every query word leaves most queries with no hit, MAP ~0.02;
mismatched query ids give ~0.005).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import pytrec_eval

from prerequisites import shared_data
from rankscope import evaluate
from rankscope.engines.base import Document, Query
from rankscope.engines.postgres import PostgresEngine

pytest.importorskip("psycopg")

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def cranfield_dir() -> Path:
    return shared_data("cranfield", "beir", "corpus.jsonl").parent


def load_cranfield() -> tuple[list[Document], list[Query], dict[str, dict[str, int]]]:
    base = cranfield_dir()
    with (base / "corpus.jsonl").open() as fh:
        docs = [Document(str(r["_id"]), r["text"], title=r["title"]) for r in map(json.loads, fh)]
    with (base / "queries.jsonl").open() as fh:
        queries = [Query(str(r["_id"]), r["text"]) for r in map(json.loads, fh)]
    qrels: dict[str, dict[str, int]] = {}
    with (base / "qrels" / "test.tsv").open() as fh:
        next(fh)  # header
        for line in fh:
            qid, doc, grade = line.split()
            qrels.setdefault(qid, {})[doc] = int(grade)
    return docs, queries, qrels


def test_cranfield_map_and_ndcg(
    postgres_dsn: str, record_property: Callable[[str, object], None]
) -> None:
    docs, queries, qrels = load_cranfield()
    assert len(docs) == 1400 and len(queries) == 225
    with PostgresEngine(postgres_dsn, drop_on_close=True) as engine:
        engine.index(docs)
        run = {q.id: {h.doc_id: h.score for h in engine.search(q, 100)} for q in queries}
    assert all(run.values()), "every Cranfield query shares a word with some abstract"
    means = evaluate(qrels, run, measures=("map", "ndcg@10")).mean()
    mean_ap, ndcg10 = means["map"], means["ndcg@10"]
    scores = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut.10"}).evaluate(run)
    assert mean_ap == pytest.approx(sum(s["map"] for s in scores.values()) / len(qrels))
    assert ndcg10 == pytest.approx(sum(s["ndcg_cut_10"] for s in scores.values()) / len(qrels))
    record_property("cranfield_map_at_100", round(mean_ap, 4))
    record_property("cranfield_ndcg_at_10", round(ndcg10, 4))
    print(f"postgres engine on Cranfield: MAP@100 {mean_ap:.4f}, nDCG@10 {ndcg10:.4f}")
    assert (mean_ap, ndcg10) == pytest.approx((0.22238028762738923, 0.287662688264628), abs=1e-4)
