"""trec_eval options (-M, -J, -c, -l), measure parsing, C number parsing and the CLI's refusals."""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankscope.cli.app import main
from rankscope.cli.trec_eval import run_trec_eval
from rankscope.data import Qrels, Run
from rankscope.data.numbers import c_atof, c_atol
from rankscope.errors import MeasureError
from rankscope.metrics.trec_eval import format_double, parse_trec_measures, trec_measures

SPECS = ["all_trec", "dcg", "ideal_dcg", "ndcg.0=1,2=5", "rbp.p=0.8", "G.1=0.5,3=7"]
DOCS = [f"d{i}" for i in range(10)]


@st.composite
def data(draw: st.DrawFn) -> tuple[Qrels, Run]:
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in ("a", "b", "c"):
        if draw(st.booleans()) or q == "a":
            docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=8, unique=True))
            qrels[q] = {d: draw(st.integers(-2, 3)) for d in docs}
        if draw(st.booleans()) or q == "a":
            docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=10, unique=True))
            run[q] = {d: draw(st.sampled_from([0.0, 1.0, 2.5, -1.0])) for d in docs}
    return Qrels.from_dict(qrels), Run.from_dict(run)


def _same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


@settings(max_examples=60, deadline=None)
@given(case=data(), depth=st.integers(0, 6))
def test_trec_depth_equals_truncated_run(case: tuple[Qrels, Run], depth: int) -> None:
    qrels, run = case
    cut = Run.from_dict({q: dict(run.ranking(q)[:depth]) for q in run.query_ids})
    got = trec_measures(qrels, run, SPECS, depth=depth)
    want = trec_measures(qrels, cut, SPECS)
    _same(got.per_query, want.per_query)
    assert got.format(per_query=True) == want.format(per_query=True)


@settings(max_examples=60, deadline=None)
@given(case=data(), level=st.integers(0, 3))
def test_trec_judged_only_equals_run_without_unjudged(case: tuple[Qrels, Run], level: int) -> None:
    qrels, run = case
    judged = qrels.to_dict()
    kept = {
        q: {d: s for d, s in run.ranking(q) if judged.get(q, {}).get(d, -1) >= 0}
        for q in run.query_ids
    }
    kept = {q: docs for q, docs in kept.items() if docs}
    got = trec_measures(qrels, run, ["all_trec"], judged_only=True, rel_level=level)
    if not any(q in qrels.query_ids for q in kept):
        return  # nothing judged was retrieved: no reference evaluation to compare with
    want = trec_measures(qrels, Run.from_dict(kept), ["all_trec"], rel_level=level)
    common = [q for q in got.query_ids if q in want.query_ids]
    for name, values in want.per_query.items():
        mine = dict(zip(got.query_ids, got.per_query[name].tolist(), strict=True))
        theirs = dict(zip(want.query_ids, values.tolist(), strict=True))
        for q in common:
            assert mine[q] == pytest.approx(theirs[q], nan_ok=True), (q, name)


@settings(max_examples=60, deadline=None)
@given(case=data())
def test_trec_complete_averages_over_all_qrels_queries(case: tuple[Qrels, Run]) -> None:
    qrels, run = case
    got = trec_measures(qrels, run, ["all_trec"], average_over_qrels=True)
    assert got.query_ids == qrels.query_ids
    plain = trec_measures(qrels, run, ["all_trec"])
    missing = [i for i, q in enumerate(got.query_ids) if q not in plain.query_ids]
    for i in missing:
        assert got.per_query["num_ret"][i] == 0
        assert got.per_query["map"][i] == 0
        assert got.per_query["P_5"][i] == 0
        assert got.per_query["num_rel"][i] == sum(
            1 for g in qrels.query(got.query_ids[i]).values() if g >= 1
        )
    nq = len(qrels.query_ids)
    assert got.summary["num_q"] == nq
    assert got.summary["map"] == pytest.approx(float(np.sum(got.per_query["map"])) / nq)


def test_trec_c_number_parsing() -> None:
    assert c_atof("abc") == 0.0
    assert c_atof(" 1e3x") == 1000.0
    assert c_atof(".5") == 0.5
    assert c_atof("-inf") == -math.inf
    assert math.isnan(c_atof("nan"))
    assert c_atol("23.4") == 23
    assert c_atol("-7x") == -7
    assert c_atol("x") == 0


def test_trec_format_double_like_printf() -> None:
    assert format_double(0.123449999) == "0.1234"
    assert format_double(-412.66666) == "-412.6667"
    assert format_double(math.nan) == "   nan"
    assert format_double(-math.nan) == "  -nan"
    assert format_double(math.inf) == "   inf"


def test_trec_measure_parsing() -> None:
    columns = parse_trec_measures(["P.20,5", "map", "P.1", "official"])
    names = [c.name for c in columns]
    assert names[:3] == ["runid", "num_q", "num_ret"]
    # trec_eval uses the first parameters given, cutoffs sorted
    assert [n for n in names if n.startswith("P_")] == ["P_5", "P_20"]
    for bad, message in [
        ("nope", "illegal measure"),
        ("P.", "empty parameter list"),
        ("prefs_simp", "preference"),
        ("all_prefs", "preference"),
    ]:
        with pytest.raises(MeasureError, match=message):
            parse_trec_measures([bad])


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("P.5,5", "duplicate cutoffs"),
        ("P.0,5", "positive"),
        ("iprec_at_recall..5,.5", "duplicate cutoffs"),
        ("ndcg.1=2,,3", "malformed"),
        ("ndcg.1", "malformed"),
        ("utility.1,2", "4 coefficients"),
    ],
)
def test_trec_bad_parameters(spec: str, message: str) -> None:
    qrels = Qrels.from_dict({"q": {"a": 1}})
    run = Run.from_dict({"q": {"a": 1.0}})
    with pytest.raises(MeasureError, match=message):
        trec_measures(qrels, run, [spec])


def test_trec_parameter_output_names() -> None:
    qrels = Qrels.from_dict({"q": {"a": 1, "b": 2}})
    run = Run.from_dict({"q": {"a": 1.0, "c": 2.0}})
    ev = trec_measures(
        qrels,
        run,
        ["P.20,5", "ndcg_cut.23.4", "Rprec_mult.5.0,0.35", "utility.2,-1,0,0", "set_F.0.5"],
    )
    assert set(ev.per_query) == {
        "P_5", "P_20", "Rprec_mult_0.35", "Rprec_mult_5.00", "utility_2,-1,0,0",
        "ndcg_cut_23", "set_F_0.5",
    }  # fmt: skip
    names = [line.split("\t")[0].rstrip() for line in ev.format().splitlines()]
    assert names == [
        "P_5", "P_20", "Rprec_mult_0.35", "Rprec_mult_5.00", "utility_2,-1,0,0",
        "ndcg_cut_23", "set_F_0.5",
    ]  # fmt: skip


def _cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run_trec_eval(args, out, err)
    return status, out.getvalue(), err.getvalue()


def test_trec_cli_warns_on_scores_trec_eval_reads_with_atof(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 1\n1 0 b 0\n")
    run = tmp_path / "run"
    run.write_text("1 Q0 a 1 abc r\n1 Q0 b 2 0.5 r\n")
    status, out, err = _cli(["-m", "recip_rank", str(qrels), str(run)])
    assert status == 0
    assert out == "recip_rank            \tall\t0.5000\n"  # 'abc' reads as 0.0, below 0.5
    assert "abc" in err


@pytest.mark.parametrize(
    ("run_text", "message"),
    [
        ("", "empty"),
        ("1 Q0 a 1\n", "malformed"),
        ("1 Q0 a 1 2.0 r\n1 Q0 a 2 1.0 r\n", "duplicate"),
    ],
)
def test_trec_cli_refuses_what_trec_eval_refuses(
    tmp_path: Path, run_text: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 1\n")
    run = tmp_path / "run"
    run.write_text(run_text)
    status = main(["trec_eval", str(qrels), str(run)])
    captured = capsys.readouterr()
    assert status != 0
    assert captured.out == ""
    assert message in captured.err
    assert str(run) in captured.err


def test_trec_cli_usage_and_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 1\n")
    status, _, err = _cli([str(qrels)])
    assert status == 1 and "Usage" in err
    status, _, err = _cli(["-x", str(qrels), str(qrels)])
    assert status == 1
    assert main(["trec_eval", "-R", "prefs", str(qrels), str(qrels)]) == 2
    assert "not supported" in capsys.readouterr().err
    status, out, _ = _cli(["-h"])
    assert status == 0 and "-M" in out


def test_trec_cli_debug_query_filter(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 1\n2 0 a 1\n")
    run = tmp_path / "run"
    run.write_text("1 Q0 a 1 1 r\n2 Q0 b 1 1 r\n")
    status, out, _ = _cli(["-D", "0.2", "-q", "-m", "map", str(qrels), str(run)])
    assert status == 0
    assert out == "map                   \t2\t0.0000\nmap                   \tall\t0.0000\n"
