"""evaluate() with trec_eval's measures: agreement with pytrec_eval, -c, rel levels, batching."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from test_api_evaluate import random_data

from prerequisites import shared_data
from rankscope import Qrels, Run, evaluate
from rankscope.errors import InputError
from rankscope.metrics import trec_eval as trec


def test_trec_measures_agree_with_pytrec_eval() -> None:
    qrels, run = random_data(6)
    mine = evaluate(
        qrels,
        run,
        ["map", "ndcg@10", "P@10", "recall@100", "mrr", "ndcg", "Rprec", "bpref", "map@5",
         "num_rel_ret", "P@5", "iprec@0.5", "set_F", "success@3", "f1"],
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
        "f1": "set_F",  # f1 without a cutoff is the F1 of the retrieved set
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
    both = evaluate(
        qrels, run, ["P@10", "P(rel=2)@10", "ndcg", "ndcg(1=1,2=5,3=10)", "dcg", "dcg(1=1,2=5)"]
    )
    at_two = evaluate(qrels, run, ["P@10"], rel_level=2)
    np.testing.assert_array_equal(both.values("P(rel=2)@10"), at_two.values("P@10"))
    assert not np.array_equal(both.values("ndcg"), both.values("ndcg(1=1,2=5,3=10)"))
    # one family with two parameter sets needs two kernel calls; each keeps its own values
    direct = trec.trec_measures(Qrels.from_dict(qrels), Run.from_dict(run), ["dcg.1=1,2=5"])
    np.testing.assert_allclose(both.values("dcg(1=1,2=5)"), direct.per_query["dcg_1=1,2=5"])
    assert not np.array_equal(both.values("dcg"), both.values("dcg(1=1,2=5)"))


# ---------------------------------------------------------------- trec_eval's own test outputs
def _shared_data() -> Path:
    return shared_data("trec_eval_test")


def _read_pairs(path: Path, doc_col: int, value_col: int, cast: type) -> dict[str, dict]:  # type: ignore[type-arg]
    out: dict[str, dict] = {}  # type: ignore[type-arg]
    for line in path.read_text().splitlines():
        cols = line.split()
        out.setdefault(cols[0], {})[cols[doc_col]] = cast(cols[value_col])
    return out


@pytest.mark.parametrize(
    ("expected", "qrels_file", "run_file", "options"),
    [
        ("out.test.aq", "qrels.test", "results.test", {}),
        ("out.test.aqc", "qrels.test", "results.trunc", {"average_over_qrels": True}),
        (
            "out.test.aqcM",
            "qrels.test",
            "results.trunc",
            {"average_over_qrels": True, "depth": 100},
        ),
        ("out.test.aql", "qrels.rel_level", "results.test", {"rel_level": 2}),
    ],
)
def test_all_trec_through_evaluate_matches_trec_eval(
    expected: str, qrels_file: str, run_file: str, options: dict[str, object]
) -> None:
    """Every all_trec measure, by its canonical name, per query and 'all', as trec_eval prints."""
    data = _shared_data()
    qrels = _read_pairs(data / qrels_file, 2, 3, int)
    run = Run.from_dict(_read_pairs(data / run_file, 2, 4, float), name="STANDARD")
    results = evaluate(qrels, run, "all_trec", **options)  # type: ignore[arg-type]
    printed: dict[tuple[str, str], str] = {}
    for line in (data / expected).read_text().splitlines():
        name, query, text = line.split()
        printed[(name, query)] = text
    per_query = results.per_query()
    means = results.mean()
    checked = 0
    for m in results.measure_objects:
        column = trec.column_name(m)
        assert column is not None, m
        integer = column.startswith("num_")
        for query, value in [
            *((q, per_query[q][str(m)]) for q in per_query),
            ("all", means[str(m)]),
        ]:
            want = printed.get((column, query))
            if want is None:  # aggregate-only measures have no per-query line
                assert query != "all" and column in ("gm_map", "gm_bpref", "num_q"), column
                continue
            got = str(round(value)) if integer else f"{value:.4f}"
            assert got == want, (column, query)
            checked += 1
    assert checked > 250
    assert set(results.query_ids()) == {q for _, q in printed if q != "all"}


def test_a_run_sharing_no_query_is_an_error_unless_averaging_over_qrels() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"other": {"a": 1.0}}
    with pytest.raises(InputError, match="run 'run' shares no query with the qrels"):
        evaluate(qrels, run, ["map", "hit@5"])
    r = evaluate(qrels, run, ["map", "hit@5", "num_rel"], average_over_qrels=True)
    assert r.query_ids() == ("q1", "q2")
    assert r.mean() == {"map": 0.0, "hit@5": 0.0, "num_rel": 2.0}


def test_no_shared_query_shows_three_ids_of_each_side() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}, "q4": {"d": 1}}
    with pytest.raises(InputError) as info:
        evaluate(qrels, {"1": {"a": 1.0}, "2": {"a": 1.0}}, ["map"])
    assert str(info.value) == (
        "run 'run' shares no query with the qrels: the run's query ids are '1', '2', the "
        "qrels' 'q1', 'q2', 'q3' (3 of 4). Check that the run and the qrels use the same "
        "query ids"
    )
