"""evaluate() with trec_eval's measures: agreement with pytrec_eval, -c, rel levels, batching."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_api_evaluate import random_data

from rankscope import Qrels, Run, evaluate

trec = pytest.importorskip("rankscope.metrics.trec", reason="trec_eval kernels not installed")


def test_trec_measures_agree_with_pytrec_eval() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = random_data(6)
    mine = evaluate(
        qrels,
        run,
        ["map", "ndcg@10", "P@10", "recall@100", "mrr", "ndcg", "Rprec", "bpref", "map@5",
         "num_rel_ret", "P@5", "iprec@0.5", "set_F", "success@3"],
    )  # fmt: skip
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels,
        {"map", "ndcg_cut.10", "P.5,10", "recall.100", "recip_rank", "ndcg", "Rprec", "bpref",
         "map_cut.5", "num_rel_ret", "iprec_at_recall", "set_F", "success.3"},
    )  # fmt: skip
    theirs = evaluator.evaluate(run)
    columns = {
        "map": "map", "ndcg@10": "ndcg_cut_10", "P@10": "P_10", "recall@100": "recall_100",
        "mrr": "recip_rank", "ndcg": "ndcg", "Rprec": "Rprec", "bpref": "bpref",
        "map@5": "map_cut_5", "num_rel_ret": "num_rel_ret", "P@5": "P_5",
        "iprec@0.5": "iprec_at_recall_0.50", "set_F": "set_F", "hit@3": "success_3",
    }  # fmt: skip
    per_query = mine.per_query()
    assert set(per_query) == set(theirs)
    for q, values in per_query.items():
        for name, column in columns.items():
            assert values[name] == pytest.approx(theirs[q][column], abs=1e-12), (q, name)
    means = mine.mean()
    for name in ("map", "ndcg@10", "P@10", "mrr", "hit@3"):
        expected = sum(theirs[q][columns[name]] for q in theirs) / len(theirs)
        assert means[name] == pytest.approx(expected, abs=1e-12), name


def test_trec_summary_and_average_over_qrels() -> None:
    qrels, run = random_data(7)
    names = ["map", "P@10", "num_rel", "num_rel_ret", "gm_map", "hit@10"]
    plain = evaluate(qrels, run, names)
    all_q = evaluate(qrels, run, names, average_over_qrels=True)
    direct = trec.trec_measures(
        Qrels.from_dict(qrels), Run.from_dict(run), ["map", "P.10", "num_rel", "num_rel_ret",
        "gm_map", "success.10"], average_over_qrels=True
    )  # fmt: skip
    for name, column in [("map", "map"), ("P@10", "P_10"), ("num_rel", "num_rel"),
                         ("gm_map", "gm_map"), ("hit@10", "success_10")]:  # fmt: skip
        assert all_q.mean()[name] == pytest.approx(float(direct.summary[column])), name
    missing = all_q.run().missing_query_ids
    assert missing and set(all_q.query_ids()) == set(plain.query_ids()) | set(missing)
    n_all, n_eval = len(all_q.query_ids()), len(plain.query_ids())
    assert all_q.mean()["map"] == pytest.approx(plain.mean()["map"] * n_eval / n_all)
    assert all_q.mean()["num_rel"] > plain.mean()["num_rel"]  # sums over more queries
    assert all(math.isnan(v) for v in all_q.values("gm_map"))  # an aggregate only
    for q in missing:
        row = all_q.per_query()[q]
        assert row["map"] == 0.0 and row["num_rel_ret"] == 0.0
        assert row["num_rel"] == sum(1 for g in qrels[q].values() if g >= 1)


def test_default_measures_and_rel_level_groups() -> None:
    qrels, run = random_data(8)
    r = evaluate(qrels, run)
    assert r.measures == ("map", "ndcg@10", "P@10", "recall@100", "mrr")
    both = evaluate(qrels, run, ["P@10", "P(rel=2)@10", "ndcg", "ndcg(1=1,2=5,3=10)"])
    at_two = evaluate(qrels, run, ["P@10"], rel_level=2)
    np.testing.assert_array_equal(both.values("P(rel=2)@10"), at_two.values("P@10"))
    assert not np.array_equal(both.values("ndcg"), both.values("ndcg(1=1,2=5,3=10)"))
