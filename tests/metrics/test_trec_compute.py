"""Gains of any size: trec_eval's setup_gains lists one entry per relevance level up to the
largest grade; rankscope lists only the levels a measure reads, so a grade costs no more than
its count, with the values trec_eval's listing gives."""

from __future__ import annotations

import math
import tracemalloc
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankscope import evaluate
from rankscope.data import Qrels, Run
from rankscope.errors import MeasureError
from rankscope.metrics import trec_compute
from rankscope.metrics.trec_compute import setup_gains

L2 = math.log2
GAIN_MEASURES = ["ndcg", "ndcg_rel", "Rndcg", "G", "rbp", "ndcg@2", "dcg", "ideal_dcg"]
# q1 ranks d3 (unjudged), d1 (grade g), d2 (grade 1).
RUN = {"q1": {"d3": 3.0, "d1": 2.0, "d2": 1.0}}


def _ndcg(g: int) -> float:
    """trec_eval's ndcg for RUN, summed in its order: gains are the grades."""
    dcg = 0.0 + float(g) / L2(3) + 1.0 / L2(4)
    ideal = 0.0 + float(g) / L2(2) + 1.0 / L2(3)
    return dcg / ideal


@pytest.mark.parametrize("grade", [999_999_999, 10**15, 2**63 - 1])  # LONG_MAX: trec_eval overflows
def test_a_huge_grade_scores_as_trec_eval_scores_it(grade: int) -> None:
    result = evaluate({"q1": {"d1": grade, "d2": 1}}, RUN, ["ndcg", "ndcg_rel", "ndcg@3"])
    values = result.per_query("run")["q1"]
    assert values["ndcg"] == pytest.approx(_ndcg(grade), rel=1e-15, abs=0)
    assert values["ndcg@3"] == pytest.approx(_ndcg(grade), rel=1e-15, abs=0)
    # ndcg_rel: at d1 (rank 2) dcg g/log2(3) over ideal g + 1/log2(3); at d2 (rank 3) the ndcg
    first = (float(g := grade) / L2(3)) / (float(g) + 1.0 / L2(3))
    assert values["ndcg_rel"] == pytest.approx((first + _ndcg(grade)) / 2, rel=1e-14, abs=0)


def test_grades_cost_their_count_not_their_value() -> None:
    """trec_eval's listing of 10**6 levels took 7.5 s and a list of a million gains."""
    qrels = {"q1": {"d1": 10**6, "d2": 1}, "q2": {"d1": 3}}
    evaluate(qrels, RUN, GAIN_MEASURES)  # imports and first-use caches
    tracemalloc.start()
    try:
        result = evaluate(qrels, RUN, GAIN_MEASURES, depth=2)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, f"{peak} bytes traced"
    assert result.per_query("run")["q1"]["ndcg@2"] == pytest.approx(
        (10**6 / L2(3)) / (10**6 + 1 / L2(3)), rel=1e-15
    )


def test_a_negative_huge_grade_is_judged_and_not_relevant() -> None:
    result = evaluate({"q1": {"d1": -(10**18), "d2": 1}}, RUN, ["ndcg", "Rndcg", "G"])
    assert result.per_query("run")["q1"]["ndcg"] == pytest.approx(0.5, rel=1e-15)


def test_many_distinct_largest_grades_cost_their_count() -> None:
    """Each query its own largest grade: one group of gains per query, each costing its rows."""
    n = 3000
    qrels = {f"q{i}": {"d1": 10**9 + i, "d2": i} for i in range(n)}
    run = {f"q{i}": {"d2": 2.0, "d1": 1.0} for i in range(n)}
    result = evaluate(qrels, run, ["ndcg"])
    expected = [
        (i / L2(2) + (10**9 + i) / L2(3)) / ((10**9 + i) + i / L2(3)) if i else 1 / L2(3)
        for i in range(n)
    ]
    got = result.values("ndcg", "run")
    by_id = dict(zip(result.query_ids("run"), got.tolist(), strict=True))
    assert [by_id[f"q{i}"] for i in range(n)] == pytest.approx(expected, rel=1e-14)


def test_fractional_gains_with_a_huge_grade_are_refused_naming_the_query() -> None:
    with pytest.raises(MeasureError, match=r"\(1=0\.5\).*query 'q1' has a grade of 999999999"):
        evaluate({"q1": {"d1": 999_999_999, "d2": 1}}, RUN, ["ndcg(1=0.5)"])


def test_the_listing_of_levels_keeps_only_what_measures_read() -> None:
    gains = setup_gains((("5", 0.0), ("2", 7.0)), 10**12, np.array([1, 5, 10**9]))
    levels = [level for level, _ in gains.order]
    # 0 (the lowest default gain), the grades held, the highest level the pairs leave out
    assert sorted(levels) == [0, 1, 2, 5, 10**9, 10**12 - 1]
    assert gains.order[-1] == (10**12 - 1, float(10**12 - 1))


@st.composite
def _judged(draw: st.DrawFn) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(draw(st.integers(1, 4))):
        docs = [f"d{i}" for i in range(draw(st.integers(1, 6)))]
        grades = draw(st.lists(st.integers(-2, 40), min_size=len(docs), max_size=len(docs)))
        qrels[f"q{q}"] = dict(zip(docs, grades, strict=True))
        ranked = draw(st.permutations([*docs, "x1", "x2"]))
        run[f"q{q}"] = {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
    return qrels, run


_PAIRS = st.lists(st.tuples(st.integers(-1, 45), st.integers(-5, 50)), max_size=4).map(
    lambda ps: ",".join(f"{level}={gain}" for level, gain in ps)
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=_judged(), pairs=_PAIRS, depth=st.sampled_from([None, 2, 4]))
def test_listing_the_levels_read_matches_listing_every_level(
    data: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]],
    pairs: str,
    depth: int | None,
) -> None:
    qrels, run = data
    measures = [f"{m}({pairs})" if pairs else m for m in ("ndcg", "ndcg_rel", "Rndcg", "G")]
    measures += [f"rbp(p=0.8{',' + pairs if pairs else ''})"]
    the_qrels, the_run = Qrels.from_dict(qrels), Run.from_dict(run, name="r")
    fast = evaluate(the_qrels, the_run, measures, depth=depth)
    with patch.object(trec_compute, "whole_gains", lambda _pairs: False):  # every level listed
        full = evaluate(the_qrels, the_run, measures, depth=depth)
    for name in fast.measures:
        a, b = fast.values(name, "r"), full.values(name, "r")
        assert np.array_equal(a, b, equal_nan=True), name
