"""rankscope.measures.register: a measure of one query's ranking, computed under rankscope's
rules (-c, -J, -M, rel levels, cutoffs) and usable wherever a measure name is."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rankscope import evaluate
from rankscope.errors import MeasureError
from rankscope.measures import RankedQuery, register, registered, unregister
from rankscope.metrics.names import parse_measure

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
QRELS = str(EXAMPLES / "qrels.txt")
RUNS = [str(EXAMPLES / "bm25.run"), str(EXAMPLES / "dense.run")]


def precision(q: RankedQuery) -> float:
    assert q.cutoff is not None
    return sum(q.relevant) / q.cutoff


def hit(q: RankedQuery) -> float:
    return 1.0 if any(q.relevant) else 0.0


def average_precision(q: RankedQuery) -> float:
    found, total = 0, 0.0
    for rank, relevant in enumerate(q.relevant, start=1):
        if relevant:
            found += 1
            total += found / rank
    return total / q.num_rel if q.num_rel else 0.0


@pytest.fixture
def custom() -> Iterator[None]:
    register("my_p", precision)
    register("my_hit", hit)
    register("my_ap", average_precision, cutoff=False)
    yield
    for name in ("my_p", "my_hit", "my_ap"):
        unregister(name)


def test_a_registered_measure_equals_the_builtin_it_reimplements(custom: None) -> None:
    got = evaluate(QRELS, RUNS, ["my_p@10", "P@10", "my_hit@1", "hit@1", "my_ap", "map"])
    for run in ("bm25", "dense"):
        mean = got.mean(run)
        assert mean["my_p@10"] == pytest.approx(mean["P@10"], abs=1e-15)
        assert mean["my_hit@1"] == mean["hit@1"]
        assert mean["my_ap"] == pytest.approx(mean["map"], abs=1e-15)
    assert got.mean("bm25")["my_p@10"] == pytest.approx(0.63, abs=1e-15)


@pytest.mark.parametrize(
    "options",
    [
        {"rel_level": 2},
        {"judged_only": True},
        {"depth": 3},
    ],
)
def test_rankscope_rules_apply_around_the_function(
    custom: None, options: dict[str, object]
) -> None:
    got = evaluate(QRELS, RUNS, ["my_p@5", "P@5", "my_ap", "map"], **options)  # type: ignore[arg-type]
    for run in ("bm25", "dense"):
        per_query = got.per_query(run)
        for values in per_query.values():
            assert values["my_p@5"] == pytest.approx(values["P@5"], abs=1e-15)
            assert values["my_ap"] == pytest.approx(values["map"], abs=1e-15)


def test_a_query_the_run_lacks_counts_as_trec_eval_c_counts_it(custom: None) -> None:
    qrels = {"q1": {"a": 1, "b": 2}, "q2": {"c": 1}, "q3": {"d": 1}}
    run = {"q1": {"a": 3.0, "x": 2.0, "b": 1.0}, "q2": {"y": 1.0, "c": 0.5}}
    measures = ["my_p@2", "P@2", "my_ap", "map", "my_hit@1", "hit@1"]
    plain = evaluate(qrels, run, measures).mean("run")
    over_qrels = evaluate(qrels, run, measures, average_over_qrels=True).mean("run")
    assert plain["my_p@2"] == plain["P@2"] == 0.5
    assert over_qrels["my_p@2"] == over_qrels["P@2"] == pytest.approx(1 / 3, abs=1e-15)
    assert over_qrels["my_ap"] == pytest.approx(over_qrels["map"], abs=1e-15)
    assert over_qrels["my_ap"] == pytest.approx((1 / 1 + 2 / 3) / 2 / 3 + 0.5 / 3, abs=1e-15)
    assert over_qrels["my_hit@1"] == over_qrels["hit@1"] == pytest.approx(1 / 3, abs=1e-15)


def test_names_are_checked_and_parsed_like_any_measure(custom: None) -> None:
    assert str(parse_measure("MY_P@10")) == "my_p@10"
    assert "my_hit" in registered()
    with pytest.raises(MeasureError, match="'map' already names the measure 'map'"):
        register("map", hit)
    with pytest.raises(MeasureError, match="pass replace=True"):
        register("my_hit", hit)
    register("my_hit", hit, replace=True)
    with pytest.raises(MeasureError, match="a letter then letters"):
        register("x" * 10_000, hit)
    with pytest.raises(MeasureError, match="a letter then letters"):
        register("bad\x00name", hit)
    with pytest.raises(MeasureError, match="takes no cutoff"):
        parse_measure("my_ap@10")


def test_a_bad_value_or_a_failing_function_names_the_measure_and_query() -> None:
    register("my_nan", lambda q: float("nan"))
    register("my_text", lambda q: "high")  # type: ignore[arg-type,return-value]
    register("my_fail", lambda q: 1 / 0)
    try:
        with pytest.raises(MeasureError, match=r"measure 'my_nan' returned nan for query '101'"):
            evaluate(QRELS, RUNS[0], ["my_nan"])
        with pytest.raises(MeasureError, match=r"'my_text' returned 'high' \(str\)"):
            evaluate(QRELS, RUNS[0], ["my_text"])
        with pytest.raises(MeasureError, match=r"'my_fail' failed on query '101': Zero"):
            evaluate(QRELS, RUNS[0], ["my_fail"])
    finally:
        for name in ("my_nan", "my_text", "my_fail"):
            unregister(name)
    with pytest.raises(MeasureError, match="unknown measure 'my_nan'"):
        parse_measure("my_nan")
