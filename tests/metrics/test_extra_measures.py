"""Extra measures (hit, judged, f1, mrr@k, ndcg_exp) against values worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankscope import evaluate
from rankscope.data import Qrels, Run
from rankscope.metrics.align import align
from rankscope.metrics.kernels import measure_values
from rankscope.metrics.names import parse_measure

L2 = math.log2

# q1: ranked d1(g2) d5(unjudged) d3(g1) d2(g0); qrels d1:2 d2:0 d3:1 d9:3 -> 3 relevant.
# q2: ranked b(unjudged) a(g1); one relevant.
# q3: ranked x(g0) y(g-1): nothing relevant retrieved; z(g1) in the qrels only.
# q4: ranked m(g0) only; no relevant document in the qrels at all.
# q5: in the qrels, not in the run: never evaluated (trec_eval's rule).
QRELS = {
    "q1": {"d1": 2, "d2": 0, "d3": 1, "d9": 3},
    "q2": {"a": 1},
    "q3": {"x": 0, "y": -1, "z": 1},
    "q4": {"m": 0},
    "q5": {"u": 1},
}
RUN = {
    "q1": {"d1": 0.9, "d5": 0.8, "d3": 0.7, "d2": 0.1},
    "q2": {"b": 1.0, "a": 0.5},
    "q3": {"x": 2.0, "y": 1.0},
    "q4": {"m": 1.0},
    "q9": {"a": 1.0},  # not in the qrels: not evaluated
}

IDCG1_3 = 7 + 3 / L2(3) + 1 / L2(4)  # ideal q1 top 3: grades 3, 2, 1
DCG1_3 = 3 + 1 / L2(4)  # d1 (2^2-1) at rank 1, d3 (2^1-1) at rank 3

CASES: dict[str, list[float]] = {
    # per query, in order q1, q2, q3, q4
    "hit@1": [1, 0, 0, 0],
    "hit@2": [1, 1, 0, 0],
    "hit@100": [1, 1, 0, 0],
    "judged@1": [1, 0, 1, 1],
    "judged@2": [0.5, 0.5, 1, 1],
    "judged@10": [3 / 4, 1 / 2, 1, 1],  # denominator min(k, retrieved), as ir_measures
    "judged": [3 / 4, 1 / 2, 1, 1],
    # f1@2: q1 P=1/2 R=1/3; q2 P=1/2 R=1
    "f1@2": [2 * (1 / 6) / (5 / 6), 2 * 0.5 / 1.5, 0, 0],
    # f1@10: q1 P=2/10 R=2/3 -> 2*(2/15)/(13/15) = 4/13; q2 P=1/10 R=1 -> 2/11
    "f1@10": [4 / 13, 2 / 11, 0, 0],
    # no cutoff: P over the retrieved documents: q1 2/4, R 2/3 -> 4/7; q2 1/2, 1 -> 2/3
    "f1": [4 / 7, 2 / 3, 0, 0],
    "mrr@1": [1, 0, 0, 0],
    "mrr@2": [1, 1 / 2, 0, 0],
    "mrr@10": [1, 1 / 2, 0, 0],
    "ndcg_exp@1": [3 / 7, 0, 0, 0],
    "ndcg_exp@3": [DCG1_3 / IDCG1_3, 1 / L2(3), 0, 0],
    "ndcg_exp": [DCG1_3 / IDCG1_3, 1 / L2(3), 0, 0],
    # k beyond the run length: the ideal still has 3 relevant documents
    "ndcg_exp@50": [DCG1_3 / IDCG1_3, 1 / L2(3), 0, 0],
    # relevance level 2: only d1 (2) and d9 (3) count, with their own gains
    "ndcg_exp(rel=2)@3": [3 / (7 + 3 / L2(3)), 0, 0, 0],
    "hit(rel=2)@1": [1, 0, 0, 0],
    "mrr(rel=3)@10": [0, 0, 0, 0],
    "f1(rel=2)@2": [2 * (1 / 2 * 1 / 2) / (1 / 2 + 1 / 2), 0, 0, 0],
}


@pytest.fixture(scope="module")
def aligned():  # type: ignore[no-untyped-def]
    return align(Qrels.from_dict(QRELS), Run.from_dict(RUN))


@pytest.mark.parametrize(("name", "expected"), sorted(CASES.items()))
def test_extra_measure_by_hand(aligned, name: str, expected: list[float]) -> None:  # type: ignore[no-untyped-def]
    assert aligned.query_ids == ("q1", "q2", "q3", "q4")
    m = parse_measure(name)
    got = measure_values(aligned, [m])[m]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_rel_level_argument_applies_without_measure_rel(aligned) -> None:  # type: ignore[no-untyped-def]
    m = parse_measure("hit@2")
    np.testing.assert_array_equal(measure_values(aligned, [m], rel_level=2)[m], [1, 0, 0, 0])
    # A measure's own rel= wins over the call's level.
    own = parse_measure("hit(rel=1)@2")
    np.testing.assert_array_equal(measure_values(aligned, [own], rel_level=2)[own], [1, 1, 0, 0])


def test_ties_follow_trec_eval_order() -> None:
    # Equal scores: trec_eval ranks the larger doc id first, so "b" (not relevant) is rank 1.
    qrels = Qrels.from_dict({"q": {"a": 1, "b": 0}})
    run = Run.from_dict({"q": {"a": 1.0, "b": 1.0}})
    a = align(qrels, run)
    got = measure_values(a, [parse_measure(n) for n in ("mrr@10", "hit@1", "ndcg_exp@2")])
    assert [float(v[0]) for v in got.values()] == [0.5, 0.0, 1 / L2(3)]


def test_depth_and_judged_only_change_the_ranking() -> None:
    qrels = Qrels.from_dict({"q": {"a": 1, "c": 1}})
    run = Run.from_dict({"q": {"x": 3.0, "a": 2.0, "c": 1.0}})
    mrr, hit = parse_measure("mrr@10"), parse_measure("hit@1")
    got = measure_values(align(qrels, run, depth=1), [mrr, hit])
    assert (got[mrr][0], got[hit][0]) == (0.0, 0.0)
    got = measure_values(align(qrels, run, judged_only=True), [mrr, hit])
    assert (got[mrr][0], got[hit][0]) == (1.0, 1.0)


def test_graded_ndcg_exp_against_a_direct_formula() -> None:
    rng = np.random.default_rng(7)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(30):
        docs = [f"d{i}" for i in range(25)]
        qrels[f"q{q}"] = {d: int(rng.integers(-1, 4)) for d in docs[:: int(rng.integers(1, 4))]}
        run[f"q{q}"] = {d: float(rng.integers(0, 6)) for d in rng.permutation(docs)[:15]}
    a = align(Qrels.from_dict(qrels), Run.from_dict(run))
    m = parse_measure("ndcg_exp@10")
    got = measure_values(a, [m])[m]
    the_run = Run.from_dict(run)
    for i, qid in enumerate(a.query_ids):
        ranked = [d for d, _ in the_run.ranking(qid)][:10]
        grades = qrels[qid]
        gain = [2 ** grades[d] - 1 if grades.get(d, 0) >= 1 else 0 for d in ranked]
        dcg = sum(g / L2(r + 2) for r, g in enumerate(gain))
        ideal = sorted((2**g - 1 for g in grades.values() if g >= 1), reverse=True)[:10]
        idcg = sum(g / L2(r + 2) for r, g in enumerate(ideal))
        assert got[i] == pytest.approx(dcg / idcg if idcg else 0.0, abs=1e-12)


def test_queries_with_empty_rankings_score_zero() -> None:
    qrels = Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": 1}})
    run = Run.from_dict({"q1": {}, "q2": {"b": 1.0}})
    a = align(qrels, run)
    ms = [parse_measure(n) for n in ("hit@5", "judged@5", "f1@5", "mrr@5", "ndcg_exp@5")]
    got = measure_values(a, ms)
    for m in ms:
        assert got[m][a.query_ids.index("q1")] == 0.0, m
        assert got[m][a.query_ids.index("q2")] > 0.0, m


# ---------------------------------------------------------------- against a plain reference
def _reference(
    qrels: dict[str, dict[str, int]],
    run: dict[str, dict[str, float]],
    name: str,
    k: int | None,
    *,
    depth: int | None,
    judged_only: bool,
    rel_level: int,
) -> dict[str, float]:
    """The extras written the obvious way, one query at a time."""
    out: dict[str, float] = {}
    level = max(rel_level, 0)
    for q in sorted(set(qrels) & set(run)):
        judged = qrels[q]
        ranked = sorted(run[q], key=lambda d: d.encode(), reverse=True)  # ties: doc id desc
        ranked.sort(key=lambda d: -run[q][d])  # stable: score descending
        ranked = ranked[:depth] if depth is not None else ranked
        if judged_only:
            ranked = [d for d in ranked if d in judged and judged[d] >= 0]
        top = ranked if k is None else ranked[:k]
        rel = [d in judged and judged[d] >= level for d in top]
        num_rel = sum(1 for g in judged.values() if g >= level)
        if name == "hit":
            out[q] = float(any(rel))
        elif name == "judged":
            out[q] = sum(d in judged for d in top) / len(top) if top else 0.0
        elif name == "f1":
            p = sum(rel) / (k if k is not None else len(ranked)) if (k or ranked) else 0.0
            r = sum(rel) / num_rel if num_rel else 0.0
            out[q] = 2 * p * r / (p + r) if p + r else 0.0
        elif name == "mrr":
            out[q] = next((1.0 / (i + 1) for i, x in enumerate(rel) if x), 0.0)
        else:
            gains = [2.0 ** judged[d] - 1 if x else 0.0 for d, x in zip(top, rel, strict=True)]
            dcg = sum(g / L2(i + 2) for i, g in enumerate(gains))
            ideal = sorted((2.0**g - 1 for g in judged.values() if g >= level), reverse=True)
            ideal = ideal if k is None else ideal[:k]
            idcg = sum(g / L2(i + 2) for i, g in enumerate(ideal))
            out[q] = dcg / idcg if idcg else 0.0
    return out


@given(
    data=st.data(),
    depth=st.one_of(st.none(), st.integers(1, 12)),
    judged_only=st.booleans(),
    rel_level=st.integers(0, 3),
)
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_extras_match_a_plain_reference(
    data: st.DataObject, depth: int | None, judged_only: bool, rel_level: int
) -> None:
    docs = st.sampled_from([f"d{i}" for i in range(12)])
    queries = st.sampled_from(["q1", "q2", "q3", "q10"])
    qrels = data.draw(
        st.dictionaries(queries, st.dictionaries(docs, st.integers(-1, 3), min_size=1), min_size=1)
    )
    run = data.draw(
        st.dictionaries(
            queries,
            # few distinct scores, so that ties (broken by doc id) are common
            st.dictionaries(docs, st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=1),
            min_size=1,
        )
    )
    if not set(qrels) & set(run):
        run[next(iter(qrels))] = {"d0": 1.0}
    names = ["hit", "judged", "f1", "mrr", "ndcg_exp"]
    cutoffs: list[int | None] = [None, 1, 3, 20]
    wanted = [f"{n}@{k}" if k else n for n in names for k in cutoffs if k or n != "hit"]
    results = evaluate(
        qrels, run, wanted, depth=depth, judged_only=judged_only, rel_level=rel_level
    )
    per_query = results.per_query()
    for measure in results.measure_objects:
        k = None if measure.cutoff is None else int(measure.cutoff)
        expected = _reference(
            qrels, run, measure.name, k, depth=depth, judged_only=judged_only, rel_level=rel_level
        )
        assert set(per_query) == set(expected)
        for q, value in expected.items():
            assert per_query[q][str(measure)] == pytest.approx(value, abs=1e-12), (measure, q)
