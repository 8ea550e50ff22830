"""evaluate(): inputs (objects, dicts, files, several runs), -c/-M/-l/-J, and the Results value."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

from rankscope import Measure, Qrels, Results, Run, evaluate
from rankscope.errors import InputError, MeasureError, RankscopeError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

QRELS = {
    "q1": {"d1": 2, "d2": 0, "d3": 1, "d9": 3},
    "q2": {"a": 1},
    "q3": {"x": 0, "z": 1},
}
RUN = {
    "q1": {"d1": 0.9, "d5": 0.8, "d3": 0.7, "d2": 0.1},
    "q2": {"b": 1.0, "a": 0.5},
    "q9": {"a": 1.0},
}


def random_data(
    seed: int, nq: int = 40, ndocs: int = 60, depth: int = 30
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Graded qrels (with negative grades) and a run with distinct scores."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(nq):
        docs = [f"d{j}" for j in range(ndocs)]
        if i % 7 != 3:  # some queries are missing from the qrels
            judged = rng.sample(docs, rng.randint(1, 25))
            qrels[f"q{i}"] = {d: rng.choice([-1, 0, 0, 0, 1, 1, 2, 3]) for d in judged}
        if i % 5 != 1:  # and some from the run
            ranked = rng.sample(docs, rng.randint(1, depth))
            run[f"q{i}"] = {d: rng.random() for d in ranked}
    return qrels, run


def test_extras_on_dicts_by_hand() -> None:
    r = evaluate(QRELS, RUN, ["hit@1", "judged@2", "f1@2", "mrr@2"])
    assert r.run_names == ("run",)
    assert r.measures == ("hit@1", "judged@2", "f1@2", "mrr@2")
    assert r.query_ids() == ("q1", "q2")  # q3 is not in the run, q9 not in the qrels
    assert r.per_query() == {
        "q1": {"hit@1": 1.0, "judged@2": 0.5, "f1@2": pytest.approx(0.4), "mrr@2": 1.0},
        "q2": {"hit@1": 0.0, "judged@2": 0.5, "f1@2": pytest.approx(2 / 3), "mrr@2": 0.5},
    }
    assert r.mean() == {
        "hit@1": 0.5,
        "judged@2": 0.5,
        "f1@2": pytest.approx((0.4 + 2 / 3) / 2),
        "mrr@2": 0.75,
    }


def test_average_over_qrels_counts_missing_queries_as_zero() -> None:
    r = evaluate(QRELS, RUN, ["hit@2", "mrr@2"], average_over_qrels=True)
    assert r.query_ids() == ("q1", "q2", "q3")
    assert r.per_query()["q3"] == {"hit@2": 0.0, "mrr@2": 0.0}
    assert r.mean() == {"hit@2": pytest.approx(2 / 3), "mrr@2": pytest.approx(1.5 / 3)}
    assert r.run().missing_query_ids == ("q3",)
    assert r.settings["average_over_qrels"] is True


def test_average_over_qrels_scores_a_missing_query_as_trec_eval_c() -> None:
    # trec_eval -c ranks one unjudged stand-in document for q2, then zeroes `utility` (and
    # num_ret, rbp_resid, unj) but not `utility_2,-1,0.5,1`, whose printed name differs:
    # 2·0 - 1·1 + 0.5·2 + 1·(0 + 0 - 1 - 2) = -3 with R = 2 and no -N
    qrels = {"q1": {"d1": 1}, "q2": {"d1": 1, "d3": 2, "d4": 0}}
    r = evaluate(
        qrels,
        {"q1": {"d1": 2.0}},
        ["utility", "utility(2,-1,0.5,1)", "rbp_resid", "rbp_resid(p=0.5)"],
        average_over_qrels=True,
    )
    assert r.per_query()["q2"] == {
        "utility": 0.0,
        "utility(2,-1,0.5,1)": -3.0,
        "rbp_resid": 0.0,
        "rbp_resid(0.5)": 1.0,
    }


def test_inputs_objects_dicts_and_files_agree(tmp_path: Path) -> None:
    qrels, run = random_data(1)
    measures = ["hit@5", "judged@10", "f1@10", "mrr@10", "ndcg_exp@10"]
    from_dicts = evaluate(qrels, run, measures)
    from_objects = evaluate(Qrels.from_dict(qrels), Run.from_dict(run, name="x"), measures)
    qpath, rpath = tmp_path / "q.txt", tmp_path / "r.run"
    qpath.write_text("".join(f"{q} 0 {d} {g}\n" for q in qrels for d, g in qrels[q].items()))
    rpath.write_text(
        "".join(
            f"{q} Q0 {d} {i + 1} {s!r} myrun\n"
            for q in run
            for i, (d, s) in enumerate(run[q].items())
        )
    )
    from_files = evaluate(qpath, str(rpath), measures)
    assert from_files.run_names == ("myrun",)
    assert from_objects.run_names == ("x",)
    for other in (from_objects, from_files):
        assert other.per_query(other.run_names[0]) == from_dicts.per_query()
        assert other.mean(other.run_names[0]) == from_dicts.mean()


def test_several_runs_as_list_and_as_named_dict() -> None:
    qrels, run_a = random_data(2)
    _, run_b = random_data(3)
    a, b = Run.from_dict(run_a, name="a"), Run.from_dict(run_b, name="b")
    listed = evaluate(qrels, [a, b], ["hit@3", "mrr@10"])
    assert listed.run_names == ("a", "b")
    runs: dict[str, Run | dict[str, dict[str, float]]] = {"first": run_a, "second": b}
    named = evaluate(qrels, runs, ["hit@3", "mrr@10"])
    assert named.run_names == ("first", "second")
    assert named.per_query("first") == listed.per_query("a")
    assert named.mean("second") == listed.mean("b")
    single = evaluate(qrels, b, ["hit@3", "mrr@10"])
    assert single.mean() == listed.mean("b")
    with pytest.raises(RankscopeError, match="hold 2 runs; name one of 'a', 'b'"):
        listed.mean()
    with pytest.raises(RankscopeError, match="no run named 'c'"):
        listed.per_query("c")


def test_runs_with_the_same_name_are_told_apart() -> None:
    qrels, run = random_data(4)
    r = evaluate(qrels, [Run.from_dict(run), Run.from_dict(run)], ["hit@3"])
    assert r.run_names == ("run", "run-2")
    files = evaluate(
        EXAMPLES / "qrels.txt", [EXAMPLES / "bm25.run", EXAMPLES / "bm25.run"], ["hit@3"]
    )
    assert files.run_names == ("bm25", "bm25-2")


def test_measure_spellings_and_measure_values_are_accepted() -> None:
    r = evaluate(QRELS, RUN, ["Success@1", Measure("mrr", 2), "RR@2", "nDCG(dcg='exp-log2')@3"])
    assert r.measures == ("hit@1", "mrr@2", "ndcg_exp@3")
    np.testing.assert_array_equal(r.values("RR@2"), [1.0, 0.5])
    with pytest.raises(MeasureError, match="map was not evaluated"):
        r.values("map")
    with pytest.raises(MeasureError, match="did you mean"):
        evaluate(QRELS, RUN, ["ndgc@10"])


def test_bad_inputs_raise_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="qrels must be"):
        evaluate(42, RUN, ["hit@1"])  # type: ignore[arg-type]
    with pytest.raises(InputError, match="run must be"):
        evaluate(QRELS, 3.5, ["hit@1"])  # type: ignore[arg-type]
    with pytest.raises(InputError, match="no runs given"):
        evaluate(QRELS, [], ["hit@1"])
    with pytest.raises(InputError, match="depth"):
        evaluate(QRELS, RUN, ["hit@1"], depth=-1)
    with pytest.raises(RankscopeError):
        evaluate(tmp_path / "absent.txt", RUN, ["hit@1"])


def test_depth_rel_level_and_judged_only_reach_the_extras() -> None:
    qrels = {"q": {"a": 1, "c": 2}}
    run = {"q": {"x": 3.0, "a": 2.0, "c": 1.0}}
    assert evaluate(qrels, run, ["mrr@10"]).mean() == {"mrr@10": 0.5}
    assert evaluate(qrels, run, ["mrr@10"], depth=1).mean() == {"mrr@10": 0.0}
    assert evaluate(qrels, run, ["mrr@10"], rel_level=2).mean() == {"mrr@10": pytest.approx(1 / 3)}
    assert evaluate(qrels, run, ["mrr@10"], judged_only=True).mean() == {"mrr@10": 1.0}
    per_measure = evaluate(qrels, run, ["mrr@10", "mrr(rel=2)@10"])
    assert per_measure.mean() == {"mrr@10": 0.5, "mrr(rel=2)@10": pytest.approx(1 / 3)}


def test_extras_agree_with_ir_measures() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = random_data(5)
    # ir_measures scores qrels queries missing from the run as 0, like -c
    mine = evaluate(qrels, run, ["hit@3", "judged@10", "mrr@5"], average_over_qrels=True)
    wanted = [ir_measures.Success @ 3, ir_measures.Judged @ 10, ir_measures.RR @ 5]
    theirs: dict[str, dict[str, float]] = {}
    for metric in ir_measures.iter_calc(wanted, qrels, run):
        theirs.setdefault(metric.query_id, {})[str(metric.measure)] = metric.value
    per_query = mine.per_query()
    assert set(per_query) == set(theirs)
    for q, values in per_query.items():
        assert values["hit@3"] == pytest.approx(theirs[q]["Success@3"]), q
        assert values["judged@10"] == pytest.approx(theirs[q]["Judged@10"]), q
        assert values["mrr@5"] == pytest.approx(theirs[q]["RR@5"]), q


# ---------------------------------------------------------------- Results


def _two_run_results() -> Results:
    return evaluate(
        EXAMPLES / "qrels.txt", [EXAMPLES / "bm25.run", EXAMPLES / "dense.run"], ["hit@5", "mrr@10"]
    )


def test_results_is_immutable_and_exports() -> None:
    r = _two_run_results()
    assert r.run_names == ("bm25", "dense")
    with pytest.raises(ValueError):
        r.values("hit@5", "bm25")[0] = 3.0
    frame = r.to_frame()
    assert list(frame.columns) == ["run", "query_id", "measure", "value"]
    assert len(frame) == 2 * 2 * len(r.query_ids("bm25"))
    dense = frame[(frame.run == "dense") & (frame.measure == "mrr@10")]
    assert dense.value.mean() == pytest.approx(r.mean("dense")["mrr@10"])
    data = json.loads(r.to_json())
    assert data["measures"] == ["hit@5", "mrr@10"]
    assert [run["name"] for run in data["runs"]] == ["bm25", "dense"]
    assert data["runs"][1]["mean"] == r.mean("dense")
    assert data["runs"][0]["per_query"] == r.per_query("bm25")
    assert "per_query" not in r.to_dict(per_query=False)["runs"][0]


def test_results_render_as_tables() -> None:
    r = _two_run_results()
    text = str(r)
    lines = text.splitlines()
    assert lines[0].split() == ["run", "hit@5", "mrr@10"]
    assert lines[2].split()[0] == "bm25" and lines[3].split()[0] == "dense"
    assert f"{r.mean('dense')['mrr@10']:.4f}" in lines[3]
    assert repr(r).startswith("<Results: 2 runs, 2 measures, 10 queries>")
    one = evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, "P@1")
    assert repr(one).startswith("<Results: 1 run, 1 measure, 1 query>")
    html = r._repr_html_()
    assert html.count("<tr>") == 3 and "<th>mrr@10</th>" in html
    from rich.console import Console

    console = Console(width=120, record=True)
    console.print(r)
    assert "dense" in console.export_text()


def test_common_query_ids() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"a": 1}}
    r = evaluate(qrels, {"x": {"q1": {"a": 1.0}}, "y": {"q1": {"a": 1.0}, "q2": {"b": 1.0}}},
                 ["hit@1"])  # fmt: skip
    assert r.query_ids("x") == ("q1",) and r.query_ids("y") == ("q1", "q2")
    assert r.common_query_ids() == ("q1",)
    np.testing.assert_array_equal(r.values("hit@1", "y", r.common_query_ids()), [1.0])
    np.testing.assert_array_equal(r.values("hit@1", "y", ["q2", "q1"]), [0.0, 1.0])
    with pytest.raises(RankscopeError, match="run 'x' was not scored on 1 of the queries"):
        r.values("hit@1", "x", ["q1", "q2"])
    assert "queries per run differ" in repr(r)
    assert not math.isnan(r.mean("x")["hit@1"])


def test_files_read_together_report_the_qrels_error_first(tmp_path: Path) -> None:
    good_qrels, bad_qrels = tmp_path / "q.txt", tmp_path / "bad_q.txt"
    good_run, bad_run = tmp_path / "r.txt", tmp_path / "bad_r.txt"
    good_qrels.write_text("1 0 a 1\n")
    bad_qrels.write_text("1 0 a\n")
    good_run.write_text("1 Q0 a 1 1.0 r\n")
    bad_run.write_text("1 Q0 a 1\n")
    with pytest.raises(InputError, match=r"bad_q\.txt:1"):
        evaluate(bad_qrels, [good_run, bad_run], "P@1")
    with pytest.raises(InputError, match=r"bad_r\.txt:1"):
        evaluate(good_qrels, [good_run, bad_run], "P@1")
    assert evaluate(good_qrels, [good_run], "P@1").mean() == {"P@1": 1.0}
