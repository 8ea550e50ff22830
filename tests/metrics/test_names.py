"""Measure names: canonical spellings, aliases, parameters and error messages."""

from __future__ import annotations

import pytest

from rankscope.errors import MeasureError
from rankscope.metrics.names import FAMILIES, NICKNAMES, Measure, parse_measure, parse_measures
from rankscope.metrics.trec_eval import column_name

CANONICAL = [
    "map",
    "map@100",
    "gm_map",
    "ndcg",
    "ndcg@10",
    "mrr",
    "mrr@10",
    "P@10",
    "recall@100",
    "Rprec",
    "bpref",
    "gm_bpref",
    "infAP",
    "iprec@0.5",
    "iprec@0",
    "Rprec_mult@0.2",
    "Rprec_mult@2",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "num_nonrel_judged_ret",
    "utility",
    "utility(2,-1,0,0)",
    "11pt_avg",
    "11pt_avg(.25,.5,.75)",
    "binG",
    "G",
    "ndcg(1=3,2=9,4=4.5)",
    "dcg",
    "ideal_dcg(1=2)",
    "ndcg_rel",
    "Rndcg",
    "relative_P@5",
    "set_P",
    "set_relative_P",
    "set_recall",
    "set_map",
    "set_F",
    "set_F(0.5)",
    "rbp",
    "rbp_resid",
    "unj@10",
    "hit@5",
    "judged",
    "judged@10",
    "f1@10",
    "ndcg_exp",
    "ndcg_exp@10",
    "P(rel=2)@10",
    "ndcg(1=3,rel=2)",
    "num_rel_ret(rel=2)",
]


@pytest.mark.parametrize("name", CANONICAL)
def test_canonical_names_round_trip(name: str) -> None:
    measure = parse_measure(name)
    assert str(measure) == name
    assert parse_measure(str(measure)) == measure
    assert hash(parse_measure(name)) == hash(measure)


def test_every_family_has_a_round_tripping_example() -> None:
    for family in FAMILIES.values():
        if family.cutoff_required:
            example = f"{family.name}@{'0.5' if family.cutoff == 'float' else '10'}"
        else:
            example = family.name
        assert str(parse_measure(example)) == example


ALIASES = {
    # trec_eval -m arguments and output column names
    "ndcg_cut.10": "ndcg@10",
    "ndcg_cut_10": "ndcg@10",
    "P.10": "P@10",
    "P_10": "P@10",
    "recip_rank": "mrr",
    "recall.100": "recall@100",
    "recall_100": "recall@100",
    "map_cut.100": "map@100",
    "map_cut_100": "map@100",
    "success.5": "hit@5",
    "success_5": "hit@5",
    "iprec_at_recall_0.50": "iprec@0.5",
    "iprec_at_recall..5": "iprec@0.5",
    "Rprec_mult_0.20": "Rprec_mult@0.2",
    "ndcg.1=3,2=9": "ndcg(1=3,2=9)",
    "ndcg_1=3,2=9": "ndcg(1=3,2=9)",
    "utility.2,-1,0,0": "utility(2,-1,0,0)",
    "11pt_avg..25,.5,.75": "11pt_avg(.25,.5,.75)",
    "set_F.0.5": "set_F(0.5)",
    "relative_P_5": "relative_P@5",
    "unj_10": "unj@10",
    # ir_measures names
    "nDCG@10": "ndcg@10",
    "nDCG": "ndcg",
    "NDCG@10": "ndcg@10",
    "AP": "map",
    "MAP": "map",
    "AP@100": "map@100",
    "RR": "mrr",
    "MRR": "mrr",
    "RR@10": "mrr@10",
    "R@100": "recall@100",
    "Recall@100": "recall@100",
    "Precision@5": "P@5",
    "Judged@10": "judged@10",
    "Success@5": "hit@5",
    "Bpref": "bpref",
    "BPref": "bpref",
    "Rprec": "Rprec",
    "RPrec": "Rprec",
    "NumRet": "num_ret",
    "NumRelRet": "num_rel_ret",
    "NumRet(rel=1)": "num_rel_ret(rel=1)",
    "NumRel": "num_rel",
    "NumQ": "num_q",
    "infAP": "infAP",
    "SetP": "set_P",
    "SetR": "set_recall",
    "SetF": "set_F",
    "SetF(beta=0.5)": "set_F(0.5)",
    "SetAP": "set_map",
    "SetRelP": "set_relative_P",
    "IPrec@0.5": "iprec@0.5",
    "P(rel=2)@10": "P(rel=2)@10",
    "nDCG(dcg='exp-log2')@10": "ndcg_exp@10",
    'nDCG(dcg="exp-log2")': "ndcg_exp",
    # case and spacing
    "p@10": "P@10",
    "rprec": "Rprec",
    "INFAP": "infAP",
    "  map  ": "map",
    "Hit@5": "hit@5",
}


@pytest.mark.parametrize(("alias", "canonical"), sorted(ALIASES.items()))
def test_aliases_map_to_canonical(alias: str, canonical: str) -> None:
    assert str(parse_measure(alias)) == canonical


def test_ir_measures_names_are_accepted() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    for name in ["nDCG@10", "AP", "AP@100", "RR", "RR@10", "R@100", "P@10", "Judged@10",
                 "Success@5", "Bpref", "Rprec", "NumRet", "NumRelRet", "NumRel", "NumQ",
                 "infAP", "SetP", "SetR", "SetF", "nDCG", "IPrec@0.5", "P(rel=2)@10"]:  # fmt: skip
        parsed_there = ir_measures.parse_measure(name)  # the name is valid in ir_measures
        ours, theirs = parse_measure(name), parse_measure(str(parsed_there))
        assert (ours.name, ours.cutoff) == (theirs.name, theirs.cutoff)


@pytest.mark.parametrize(
    ("measure", "column"),
    [
        ("ndcg@10", "ndcg_cut_10"),
        ("map", "map"),
        ("map@100", "map_cut_100"),
        ("mrr", "recip_rank"),
        ("P@10", "P_10"),
        ("recall@100", "recall_100"),
        ("iprec@0.1", "iprec_at_recall_0.10"),
        ("Rprec_mult@5", "Rprec_mult_5.00"),
        ("ndcg(1=3,2=9,4=4.5)", "ndcg_1=3,2=9,4=4.5"),
        ("utility(2,-1,0,0)", "utility_2,-1,0,0"),
        ("11pt_avg(.25,.5,.75)", "11pt_avg_.25,.5,.75"),
        ("num_rel_ret", "num_rel_ret"),
        ("hit@5", "success_5"),
    ],
)
def test_trec_eval_column_names(measure: str, column: str) -> None:
    m = parse_measure(measure)
    assert not m.is_extra
    assert column_name(m) == column


@pytest.mark.parametrize("name", ["judged@10", "judged", "f1@10", "mrr@10", "ndcg_exp"])
def test_extras_are_not_trec_eval_measures(name: str) -> None:
    m = parse_measure(name)
    assert m.is_extra
    assert column_name(m) is None


def test_several_cutoffs_and_bare_trec_families() -> None:
    assert [str(m) for m in parse_measures("P@5,10")] == ["P@5", "P@10"]
    assert [str(m) for m in parse_measures(["P.5,10", "P@10"])] == ["P@5", "P@10"]
    assert [str(m) for m in parse_measures("success")] == ["hit@1", "hit@5", "hit@10"]
    p = [str(m) for m in parse_measures("P")]
    assert p == [f"P@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
    iprec = parse_measures("iprec_at_recall")
    assert [column_name(m) for m in iprec][:2] == ["iprec_at_recall_0.00", "iprec_at_recall_0.10"]
    assert len(iprec) == 11


def test_nicknames_expand_to_trec_eval_sets() -> None:
    official = [str(m) for m in parse_measures("official")]
    assert official[:10] == [
        "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "mrr",
        "iprec@0",
    ]  # fmt: skip
    assert official[-9:] == [f"P@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
    all_trec = parse_measures("all_trec")
    assert len(all_trec) == len(set(all_trec))
    assert parse_measure("ndcg@1000") in all_trec and parse_measure("hit@10") in all_trec
    assert set(NICKNAMES) == {"official", "all_trec"}


def test_one_string_may_list_several_measures() -> None:
    assert [str(m) for m in parse_measures("map,ndcg@10")] == ["map", "ndcg@10"]
    got = parse_measures(["map ndcg_cut.10 P@5,10"])
    assert [str(m) for m in got] == ["map", "ndcg@10", "P@5", "P@10"]
    with pytest.raises(MeasureError, match="unknown measure 'ndgc@10'; did you mean ndcg@10"):
        parse_measures("map,ndgc@10")
    with pytest.raises(MeasureError, match="cutoff 'x' in 'P@5,x'"):
        parse_measures("P@5,x")


def test_parse_measures_keeps_order_and_drops_repeats() -> None:
    got = parse_measures(["ndcg@10", "map", "nDCG@10", Measure("map"), "AP"])
    assert [str(m) for m in got] == ["ndcg@10", "map"]


def test_measure_values_are_hashable_and_immutable() -> None:
    m = Measure("P", 10)
    assert {m: 1}[parse_measure("P_10")] == 1
    with pytest.raises(AttributeError):
        m.cutoff = 5  # type: ignore[misc]
    assert Measure("iprec", 1) == parse_measure("iprec@1.0")
    assert repr(m) == "Measure('P@10')"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("ndgc@10", r"unknown measure 'ndgc@10'; did you mean ndcg@10"),
        ("recal@100", r"did you mean recall@100"),
        ("maap", r"did you mean map"),
        ("sucess@5", r"did you mean hit@5"),
        ("P", r"names 9 measures"),
        ("P@5,10", r"names 2 measures"),
        ("hit", r"needs a cutoff, e.g. hit@10"),
        ("iprec", r"needs a level"),
        ("ndcg.10", r"for a rank cutoff write ndcg@10"),
        ("bpref@10", r"takes no cutoff"),
        ("P@x", r"'x' in 'P@x' is not a positive integer"),
        ("P@0", r"must be positive"),
        ("iprec@1.5", r"must be in \[0, 1\]"),
        ("runid", r"is text, not a number"),
        ("relstring.20", r"is text, not a number|unknown"),
        ("map(judged_only=True)", r"pass judged_only=True to evaluate\(\)"),
        ("P(foo=1)@5", r"unknown parameter 'foo'"),
        ("P(rel=x)@5", r"rel in .* must be an integer"),
        ("", r"empty measure name"),
        ("P@5(rel=1)(rel=2)", r"malformed"),
        ("utility(a,b)", r"comma-separated numbers"),
    ],
)
def test_bad_names_raise_measure_error(name: str, message: str) -> None:
    with pytest.raises(MeasureError, match=message):
        parse_measure(name)


def test_unknown_family_in_constructor() -> None:
    with pytest.raises(MeasureError, match="unknown measure family 'ndgc'"):
        Measure("ndgc")
    with pytest.raises(MeasureError, match="takes no parameters"):
        Measure("map", param="1")
    with pytest.raises(MeasureError, match="positive integer"):
        Measure("P", 2.5)


def test_empty_list_is_an_error() -> None:
    with pytest.raises(MeasureError, match="no measures given"):
        parse_measures([])
