"""The regression gate's decision: non-inferiority per measure on one query set, floors, the
worst-moved queries, and its three sources (runs, a benchmark, a suite's check: section)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from check_data import N, write_qrels, write_run
from scipy import stats as scipy_stats

from rankscope.check import check, check_benchmark, check_runs, check_suite, parse_floors
from rankscope.errors import ConfigError, InputError, MeasureError, RankscopeError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "diff"))
from diff_data import BM25, CLASSIC, CRANFIELD, HAVE_CRANFIELD, LUCENE_QRELS

#: ndcg@10 of a query whose two relevant documents sit at ranks 6 and 7 instead of 1 and 2
DEMOTED_NDCG = (1 / np.log2(7) + 1 / np.log2(8)) / (1 + 1 / np.log2(3))


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    return {
        "qrels": write_qrels(tmp_path / "qrels.txt"),
        "base": write_run(tmp_path / "base.run", "base"),
        "same": write_run(tmp_path / "same.run", "same"),
        # 12 of 60 queries lose both relevant documents to rank 6 and 7
        "worse": write_run(tmp_path / "worse.run", "worse", demoted=set(range(1, 61, 5))),
        # 1 query of 60 does: Δ -0.0096, within a 0.05 margin
        "slight": write_run(tmp_path / "slight.run", "slight", demoted={7}),
    }


def test_a_regression_beyond_the_margin_fails(files: dict[str, Path]) -> None:
    found = check_runs(files["qrels"], files["base"], files["worse"], ["ndcg@10", "P@5"])
    assert found.exit_code == 1 and not found.passed
    assert (found.baseline, found.candidate, found.num_queries) == ("base", "worse", N)
    assert found.query_set == "the 60 queries of the qrels"
    ndcg, p5 = found.measures
    assert ndcg.measure == "ndcg@10" and p5.measure == "P@5"
    assert ndcg.baseline == 1.0
    assert ndcg.candidate == pytest.approx((48 + 12 * DEMOTED_NDCG) / 60, abs=1e-12)
    assert ndcg.test.delta == pytest.approx(12 * (DEMOTED_NDCG - 1) / 60, abs=1e-12)
    assert ndcg.regression and ndcg.verdict == "regression"
    # the bound is scipy's one-sided paired t bound, the p its test of delta <= -margin
    d = np.asarray([DEMOTED_NDCG - 1 if i % 5 == 1 else 0.0 for i in range(1, 61)])
    t = scipy_stats.ttest_rel(d + 0.01, np.zeros(N), alternative="greater")
    assert ndcg.test.p_value == pytest.approx(t.pvalue, rel=1e-9)
    low = scipy_stats.ttest_rel(d, np.zeros(N), alternative="greater").confidence_interval(0.95)
    assert ndcg.test.lower == pytest.approx(low.low, abs=1e-12)
    assert p5.baseline == pytest.approx(0.4) and p5.candidate == pytest.approx(0.4 - 12 * 0.4 / 60)
    # the worst-moved queries: the 12 demoted ones, 5 shown, by query id at equal loss
    assert [q.query_id for q in found.worst] == ["q1", "q11", "q16", "q21", "q26"]
    assert all(q.delta == pytest.approx(DEMOTED_NDCG - 1) for q in found.worst)
    assert found.worst_measure == "ndcg@10"


def test_an_equal_run_passes(files: dict[str, Path]) -> None:
    found = check_runs(files["qrels"], files["base"], files["same"])
    assert found.exit_code == 0 and found.passed
    (ndcg,) = found.measures
    assert ndcg.test.delta == 0.0 and ndcg.test.lower == 0.0 and ndcg.test.p_value == 0.0
    assert found.worst == ()


def test_the_margin_decides(files: dict[str, Path]) -> None:
    # one query of 60 loses x = 0.577: Δ = x / 60 = -0.0096, sd(d) = x / sqrt(60), so the
    # bound is Δ (1 + t(0.95, 59)) = -0.0257
    slight = check_runs(files["qrels"], files["base"], files["slight"], margin=0.05)
    (m,) = slight.measures
    x = DEMOTED_NDCG - 1
    assert m.test.delta == pytest.approx(x / 60, abs=1e-12)
    assert m.test.lower == pytest.approx(x / 60 * (1 + scipy_stats.t.ppf(0.95, 59)), abs=1e-12)
    assert slight.passed
    # the same drop, a margin of 0.02: the bound is below it
    assert not check_runs(files["qrels"], files["base"], files["slight"], margin=0.02).passed
    # exactly at the bound passes (the bound is not below -margin)
    at = check_runs(files["qrels"], files["base"], files["slight"], margin=-m.test.lower)
    assert at.passed


def test_a_floor_fails_a_candidate_that_is_not_inferior(files: dict[str, Path]) -> None:
    found = check_runs(
        files["qrels"], files["base"], files["same"], floors={"ndcg_cut_10": 1.5, "P@5": 0.4}
    )
    # ndcg_cut_10 is ndcg@10: checked once; P@5 is added by its floor
    assert [m.measure for m in found.measures] == ["ndcg@10", "P@5"]
    ndcg, p5 = found.measures
    assert ndcg.below_floor and ndcg.verdict == "below floor" and not ndcg.regression
    assert not p5.below_floor and p5.passed  # 0.4 is not below 0.4
    assert found.exit_code == 1


def test_floors_parse_and_refuse_bad_input() -> None:
    assert parse_floors(["ndcg@10=0.6", "P_5=0.3"]) == {"ndcg@10": 0.6, "P@5": 0.3}
    for bad in ("ndcg@10", "ndcg@10=", "=0.5", "ndcg@10=nan", "ndcg@10=inf", "ndcg@10=x"):
        with pytest.raises(InputError, match="a floor is MEASURE=VALUE"):
            parse_floors([bad])
    with pytest.raises(MeasureError):
        parse_floors(["no\x00such=0.5"])


def test_bad_settings_are_input_errors(files: dict[str, Path]) -> None:
    args = (files["qrels"], files["base"], files["same"])
    with pytest.raises(InputError, match="margin"):
        check_runs(*args, margin=-0.01)
    with pytest.raises(InputError, match="margin"):
        check_runs(*args, margin=float("nan"))
    with pytest.raises(InputError, match="alpha"):
        check_runs(*args, alpha=0.5)
    with pytest.raises(MeasureError):
        check_runs(*args, ["x" * 10_000])
    with pytest.raises(InputError, match="no measure"):
        check_runs(*args, [])
    with pytest.raises(InputError, match="name both"):
        check(files["qrels"], str(files["base"]))
    with pytest.raises(InputError, match="--view"):
        check(files["qrels"], str(files["base"]), str(files["same"]), view="all")


def test_queries_a_run_lacks_score_zero_and_are_stated(tmp_path: Path) -> None:
    qrels = write_qrels(tmp_path / "qrels.txt")
    base = write_run(tmp_path / "base.run", "base")
    lines = (tmp_path / "base.run").read_text().splitlines()
    short = tmp_path / "short.run"
    short.write_text("\n".join(x.replace(" base", " short") for x in lines[7:]) + "\n")
    found = check_runs(qrels, base, short)
    assert found.query_set == (
        "the 60 queries of the qrels (missing from the baseline: 0, from the candidate: 1; "
        "scored 0)"
    )
    assert found.worst[0].query_id == "q1" and found.worst[0].candidate == 0.0


# ---------------------------------------------------------------- a benchmark and a suite
SUITE = """\
name: cranfield-check
description: two Lucene runs on Cranfield
corpus: {{type: beir, path: {beir}, split: test}}
settings: {{k: [10], max_k: 50, warmup: 0, repeats: 1}}
engines:
  - {{name: bm25, engine: run_file, options: {{path: {bm25}}}}}
  - {{name: classic, engine: run_file, options: {{path: {classic}}}}}
check:
  baseline: bm25
  candidate: {candidate}
  measures: [ndcg@10]
  margin: 0.01
"""


def _suite(folder: Path, candidate: str = "classic") -> Path:
    path = folder / "suite.yaml"
    path.write_text(
        SUITE.format(beir=CRANFIELD / "beir", bm25=BM25, classic=CLASSIC, candidate=candidate)
    )
    return path


@pytest.mark.skipif(not HAVE_CRANFIELD, reason="no Cranfield in the shared data")
def test_a_benchmark_and_its_suite_check_section(tmp_path: Path) -> None:
    from rankscope.bench import run_benchmark
    from rankscope.suite import load_suite

    suite = _suite(tmp_path)
    out = tmp_path / "out"
    run_benchmark(load_suite(suite), out)
    found = check_benchmark(out, "bm25", "classic")
    assert found.measures[0].measure == "ndcg@10"  # the headline
    assert found.num_queries == 225 and "(view answered)" in found.query_set
    by_suite = check_suite(suite, out)
    assert by_suite == found
    assert check(suite, out=out) == found
    # classic against bm25 on the BEIR copy's qrels (graded): the same mean within 0.0001,
    # and yet 225 queries cannot rule out a loss of 0.01: the bound is -0.0111
    (m,) = found.measures
    assert round(m.baseline, 4) == 0.3427 and round(m.candidate, 4) == 0.3428
    assert m.test.delta == pytest.approx(6.1967e-05, abs=1e-9)
    assert round(m.test.lower, 4) == -0.0111
    assert m.regression and found.exit_code == 1
    # a margin of 0.02 passes it, either way round
    assert check_benchmark(out, "bm25", "classic", margin=0.02).passed
    assert check_benchmark(out, "classic", "bm25", margin=0.02).passed
    with pytest.raises(RankscopeError, match="'P@5' was not measured"):
        check_benchmark(out, "bm25", "classic", ["P@5"])
    with pytest.raises(InputError, match="'nope' is not a configuration"):
        check_benchmark(out, "bm25", "nope")
    with pytest.raises(InputError, match="no benchmark results here"):
        check_suite(suite, tmp_path / "elsewhere")


def test_a_suite_check_section_is_validated(tmp_path: Path) -> None:
    from rankscope.suite import load_suite

    qrels = write_qrels(tmp_path / "qrels.txt")
    base = write_run(tmp_path / "base.run", "base")
    text = f"""\
name: s
corpus: {{type: jsonl, path: c.jsonl}}
queries: [hello]
qrels: {qrels}
engines:
  - {{name: a, engine: run_file, options: {{path: {base}}}}}
  - {{name: b, engine: run_file, options: {{path: {base}}}}}
check:
  baseline: a
  candidate: bb
"""
    (tmp_path / "c.jsonl").write_text('{"_id": "d1", "text": "hello"}\n')
    path = tmp_path / "s.yaml"
    path.write_text(text)
    unknown = r"s\.yaml:10: check\.candidate: no configuration named 'bb'"
    with pytest.raises(ConfigError, match=unknown):
        load_suite(path)
    path.write_text(text.replace("bb", "a"))
    with pytest.raises(ConfigError, match="the baseline and the candidate are the same"):
        load_suite(path)
    path.write_text(text.replace("bb", "b") + "  margin: -1\n")
    with pytest.raises(ConfigError, match=r"s\.yaml:11"):
        load_suite(path)
    path.write_text(text.replace("candidate: bb", "candidate: b"))
    assert load_suite(path).spec.check is not None
    path.write_text(text.split("check:")[0])
    with pytest.raises(InputError, match="no check: section"):
        check_suite(path, tmp_path)


@pytest.mark.skipif(not LUCENE_QRELS.is_file(), reason="no Cranfield in the shared data")
def test_the_cranfield_runs_of_docs_ci_md() -> None:
    flagged = check_runs(LUCENE_QRELS, BM25, CLASSIC)
    (m,) = flagged.measures
    assert (round(m.baseline, 4), round(m.candidate, 4)) == (0.5075, 0.4990)
    assert round(m.test.lower, 4) == -0.0189 and not flagged.passed
    within = check_runs(LUCENE_QRELS, CLASSIC, BM25)
    assert round(within.measures[0].test.lower, 4) == -0.0020 and within.passed
