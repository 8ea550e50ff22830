"""Cohen's kappa (hand-computed cases), Kendall's tau-b, and qrels agreement."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankscope import evaluate
from rankscope.data import Qrels, Run
from rankscope.judge.agreement import (
    cohen_kappa,
    confusion_matrix,
    kendall_tau_b,
    label_agreement,
    parse_grade_map,
    ranking_agreement,
)


def _expand(table: list[list[int]], labels: list[int]) -> tuple[list[int], list[int]]:
    a: list[int] = []
    b: list[int] = []
    for i, row in enumerate(table):
        for j, n in enumerate(row):
            a += [labels[i]] * n
            b += [labels[j]] * n
    return a, b


def test_binary_kappa_by_hand() -> None:
    # [[20, 5], [10, 15]], n = 50: po = 35/50 = 0.7; pe = (25*30 + 25*20)/2500 = 0.5
    a, b = _expand([[20, 5], [10, 15]], [0, 1])
    assert cohen_kappa(a, b) == pytest.approx((0.7 - 0.5) / (1 - 0.5))


def test_weighted_kappa_by_hand() -> None:
    # 3x3 table, n = 10, labels 0, 1, 2
    table = [[3, 1, 0], [1, 2, 1], [0, 1, 1]]
    a, b = _expand(table, [0, 1, 2])
    # row sums 4, 4, 2; column sums 4, 4, 2
    # linear weights |i-j|/2: observed disagreement = (1+1+1+1)*0.5/10 = 0.2
    # expected: sum w_ij r_i c_j / 100 = 0.5*(4*4 + 4*2 + 4*4 + 4*2)/100 + 1.0*(4*2 + 2*4)/100
    #         = 0.5*48/100 + 16/100 = 0.40
    assert cohen_kappa(a, b, "linear") == pytest.approx(1 - 0.2 / 0.40)
    # quadratic weights (|i-j|/2)^2: observed = 4*0.25/10 = 0.1; expected = 0.25*0.48 + 0.16 = 0.28
    assert cohen_kappa(a, b, "quadratic") == pytest.approx(1 - 0.1 / 0.28)
    # unweighted: po = 6/10; pe = (16 + 16 + 4)/100 = 0.36
    assert cohen_kappa(a, b) == pytest.approx((0.6 - 0.36) / 0.64)


def test_kappa_edge_cases() -> None:
    assert cohen_kappa([], []) is None
    assert cohen_kappa([1, 1, 1], [1, 1, 1]) is None  # no chance disagreement: undefined
    assert cohen_kappa([0, 1, 0, 1], [0, 1, 0, 1]) == pytest.approx(1.0)
    assert cohen_kappa([0, 1, 0, 1], [1, 0, 1, 0]) == pytest.approx(-1.0)
    cats, m = confusion_matrix([0, 2], [2, 2], labels=[1])
    assert cats == (0, 1, 2) and m.tolist() == [[0, 0, 1], [0, 0, 0], [0, 0, 1]]


def test_tau_b_by_hand_and_against_scipy() -> None:
    assert kendall_tau_b([1, 2, 3], [1, 2, 3]) == pytest.approx(1.0)
    assert kendall_tau_b([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    # x = 1,2,3,4 ; y = 1,3,2,4: 5 concordant, 1 discordant -> 4/6
    assert kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(4 / 6)
    # ties: x = 1,1,2 ; y = 1,2,3 -> nc = 2, nd = 0, n0 = 3, ties in x = 1: 2/sqrt(2*3)
    assert kendall_tau_b([1, 1, 2], [1, 2, 3]) == pytest.approx(2 / math.sqrt(6))
    assert kendall_tau_b([1], [1]) is None and kendall_tau_b([2, 2], [1, 3]) is None
    from scipy import stats

    x = [0.31, 0.25, 0.25, 0.40, 0.12, 0.33, 0.40]
    y = [0.29, 0.22, 0.30, 0.41, 0.10, 0.30, 0.35]
    assert kendall_tau_b(x, y) == pytest.approx(stats.kendalltau(x, y).statistic)


def test_label_agreement_over_shared_pairs() -> None:
    human = Qrels.from_dict({"1": {"a": 4, "b": 0, "c": 2}, "2": {"d": 1}})
    llm = Qrels.from_dict({"1": {"a": 3, "b": 0, "z": 3}, "2": {"d": 1}})
    got = label_agreement(human, llm, threshold=1, map_a=parse_grade_map("4=3"))
    assert got.pairs == 3 and got.only_a == 1 and got.only_b == 1
    assert got.exact == pytest.approx(1.0)
    assert got.binary_confusion == ((1, 0), (0, 2))
    filled = label_agreement(human, llm, missing_as=0)
    assert filled.pairs == 5 and filled.labels == (0, 1, 2, 3, 4)


def test_parse_grade_map_errors() -> None:
    from rankscope.errors import InputError

    assert parse_grade_map("4=3, 1=0") == {4: 3, 1: 0}
    with pytest.raises(InputError, match="SRC=DST"):
        parse_grade_map("4:3")


def test_ranking_agreement_uses_evaluate() -> None:
    qrels = Qrels.from_dict({"1": {"a": 1, "b": 1}, "2": {"c": 1}})
    flipped = Qrels.from_dict({"1": {"x": 1}, "2": {"y": 1}})
    good = Run.from_dict({"1": {"a": 2, "b": 1, "x": 0.5}, "2": {"c": 1, "y": 0.5}}, name="good")
    mid = Run.from_dict({"1": {"x": 2, "a": 1}, "2": {"c": 1, "y": 0.5}}, name="mid")
    bad = Run.from_dict({"1": {"x": 2, "y": 1}, "2": {"y": 1, "c": 0.5}}, name="bad")
    res = ranking_agreement(qrels, qrels, [good, mid, bad], ["ndcg@10", "map"])
    assert [r.measure for r in res] == ["ndcg@10", "map"]
    assert all(r.tau_b == pytest.approx(1.0) for r in res)
    assert res[0].order("a") == ["good", "mid", "bad"]
    # the means are evaluate()'s, over the queries both qrels judge
    means = evaluate(qrels, [good, mid, bad], ["ndcg@10", "map"])
    for r in res:
        assert r.scores_a == {n: means.mean(n)[r.measure] for n in ("good", "mid", "bad")}
        assert r.queries == 2
    inverse = ranking_agreement(qrels, flipped, [good, mid, bad], ["map"])[0]
    assert inverse.tau_b is not None and inverse.tau_b < 0


_labels = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=60)


@settings(max_examples=100, deadline=None)
@given(_labels)
def test_kappa_properties(pairs: list[tuple[int, int]]) -> None:
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    for w in (None, "linear", "quadratic"):
        k = cohen_kappa(a, b, w)
        other = cohen_kappa(b, a, w)  # symmetric in the raters
        assert (k is None) == (other is None)
        if k is not None:
            assert k == pytest.approx(other)
            assert k <= 1.0 + 1e-9
            if w is None:  # unweighted kappa is at least -1
                assert k >= -1.0 - 1e-9
    if cohen_kappa(a, a) is not None:
        assert cohen_kappa(a, a) == pytest.approx(1.0)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=2, max_size=25))
def test_tau_b_matches_scipy(pairs: list[tuple[int, int]]) -> None:
    from scipy import stats

    x = [float(p[0]) for p in pairs]
    y = [float(p[1]) for p in pairs]
    ours = kendall_tau_b(x, y)
    theirs = stats.kendalltau(x, y).statistic
    if ours is None:
        assert math.isnan(theirs)
    else:
        assert ours == pytest.approx(theirs)


def test_label_agreement_is_over_the_queries_both_judge() -> None:
    from rankscope.errors import InputError

    human = Qrels.from_dict({"1": {"a": 1, "b": 0}, "2": {"c": 1}, "3": {"e": 2}})
    llm = Qrels.from_dict({"1": {"a": 1, "z": 1}, "2": {"c": 0}})
    got = label_agreement(human, llm)
    assert (got.queries, got.queries_only_a, got.queries_only_b) == (2, 1, 0)
    assert (got.shared, got.pairs, got.only_a, got.only_b) == (2, 2, 1, 1)
    filled = label_agreement(human, llm, missing_as=0)
    # query 3 is judged by the human side only: left out, not compared as 3 disagreements
    assert (filled.shared, filled.pairs, filled.queries) == (2, 4, 2)
    disjoint = Qrels.from_dict({"7": {"a": 1}})
    for missing in (None, 0):
        with pytest.raises(InputError, match=r"share no query \(3 and 1 queries\)"):
            label_agreement(human, disjoint, missing_as=missing)
    no_pair = Qrels.from_dict({"3": {"x": 1}})
    with pytest.raises(InputError, match=r"share 1 queries but no judged .* --unjudged-as"):
        label_agreement(human, no_pair)
    assert label_agreement(human, no_pair, missing_as=0).pairs == 2
