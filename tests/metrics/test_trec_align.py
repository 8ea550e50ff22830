"""align(): the run/qrels join every measure is computed from."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankscope.data import Qrels, Run, fingerprints
from rankscope.errors import DuplicateError, InputError
from rankscope.metrics import align as align_module
from rankscope.metrics.align import UNJUDGED, align

QRELS = Qrels.from_dict({"1": {"a": 1, "b": 0, "c": -1, "d": 2}, "2": {"x": 1}, "3": {"z": 1}})
RUN = Run.from_dict(
    {"1": {"a": 0.5, "b": 0.9, "c": 0.7, "e": 0.8}, "2": {"x": 1.0, "y": 1.0}, "4": {"a": 1.0}}
)


def test_align_joins_grades_in_trec_order() -> None:
    a = align(QRELS, RUN)
    assert a.query_ids == ("1", "2")
    assert a.missing_query_ids == ("3",)
    assert a.offsets.tolist() == [0, 4, 6]
    # query 1 ranked b, e, c, a; query 2: tie on score, doc id descending -> y, x
    assert a.grades.tolist() == [0, UNJUDGED, -1, 1, UNJUDGED, 1]
    assert a.judged.tolist() == [True, False, True, True, False, True]
    assert a.num_rel.tolist() == [2, 1]
    assert a.num_judged.tolist() == [4, 1]
    assert a.qrels_grades.tolist() == [2, 1, 0, -1, 1]
    assert a.qrels_offsets.tolist() == [0, 4, 5]
    assert a.positions().tolist() == [0, 1, 2, 3, 0, 1]
    assert a.query_index().tolist() == [0, 0, 0, 0, 1, 1]


def test_dense_grades_are_made_only_for_the_measures_that_read_them() -> None:
    from rankscope.metrics.evaluate import score_run
    from rankscope.metrics.names import parse_measures

    # map, P, recall and mrr read the judged rows only: no grade array as long as the run
    sparse = score_run(QRELS, RUN, parse_measures(["map", "P@2", "recall@3", "mrr"]))
    aligned = sparse.contexts[1].aligned
    assert aligned.judged_grades.tolist() == [0, -1, 1, 1]
    assert aligned._dense == []
    assert aligned.grades.tolist() == [0, UNJUDGED, -1, 1, UNJUDGED, 1]  # made when asked
    dense = score_run(QRELS, RUN, parse_measures(["ndcg", "bpref"]))
    assert dense.contexts[1].aligned._dense != []


def test_align_depth_then_judged_only() -> None:
    a = align(QRELS, RUN, depth=3, judged_only=True)
    # depth keeps b, e, c; -J then drops e (not in qrels) and c (negative grade: unjudged)
    assert a.grades.tolist() == [0, 1]
    assert a.offsets.tolist() == [0, 1, 2]


def test_align_rel_level_counts_only_non_negative_grades() -> None:
    assert align(QRELS, RUN, rel_level=2).num_rel.tolist() == [1, 0]
    assert align(QRELS, RUN, rel_level=-5).num_rel.tolist() == [3, 1]


def test_align_refuses_duplicate_docs() -> None:
    run = Run(
        name="dup",
        query_ids=("1",),
        offsets=np.array([0, 3], dtype=np.int64),
        doc_ids=pa.array(["q", "b", "q"]),
        scores=np.array([3.0, 2.0, 1.0]),
    )
    with pytest.raises(DuplicateError, match=r"duplicate document 'q' for query '1'"):
        align(QRELS, run)


def test_align_refuses_bad_depth() -> None:
    with pytest.raises(InputError, match="depth"):
        align(QRELS, RUN, depth=-1)


def test_align_empty_overlap() -> None:
    a = align(QRELS, Run.from_dict({"9": {"a": 1.0}}))
    assert a.query_ids == ()
    assert a.offsets.tolist() == [0]
    assert a.missing_query_ids == ("1", "2", "3")


# The fast join (64-bit fingerprints) must give exactly what the exact join gives.

doc_ids = st.text(min_size=1, max_size=30)  # from_dict refuses an empty id, as the readers do


@st.composite
def judged_and_ranked(draw: st.DrawFn) -> tuple[Qrels, Run]:
    docs = draw(st.lists(doc_ids, min_size=1, max_size=12, unique=True))
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in ("1", "2", "3"):
        if draw(st.booleans()):
            judged = draw(st.lists(st.sampled_from(docs), min_size=1, unique=True))
            qrels[q] = {d: draw(st.integers(-2, 3)) for d in judged}
        if draw(st.booleans()):
            ranked = draw(st.lists(st.sampled_from(docs), min_size=1, unique=True))
            run[q] = {d: draw(st.sampled_from([0.0, 1.0, 2.0])) for d in ranked}
    return Qrels.from_dict(qrels), Run.from_dict(run)


def _as_tuple(a: align_module.Aligned) -> tuple[object, ...]:
    return (
        a.query_ids,
        a.offsets.tolist(),
        a.grades.tolist(),
        a.judged.tolist(),
        a.num_rel.tolist(),
        a.qrels_grades.tolist(),
        a.missing_query_ids,
    )


@settings(max_examples=100, deadline=None)
@given(case=judged_and_ranked(), depth=st.one_of(st.none(), st.integers(0, 5)))
def test_align_fast_join_equals_exact_join(case: tuple[Qrels, Run], depth: int | None) -> None:
    qrels, run = case
    fast = align(qrels, run, depth=depth)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(align_module, "_join_hashed", lambda *args: None)
        exact = align(qrels, run, depth=depth)
    assert _as_tuple(fast) == _as_tuple(exact)


def test_align_collisions_fall_back_to_exact_join(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _as_tuple(align(QRELS, RUN))

    def colliding(values: pa.Array) -> object:
        return np.zeros(len(values), dtype=np.uint64)  # every doc gets the same key

    monkeypatch.setattr(fingerprints, "hash_strings", colliding)
    assert _as_tuple(align(QRELS, RUN)) == expected


def test_align_reads_sliced_and_large_string_arrays() -> None:
    docs = pa.array(["zz", "b", "a", "x", "y"], type=pa.large_string()).slice(1, 4)
    run = Run(
        name="r",
        query_ids=("1", "2"),
        offsets=np.array([0, 2, 4], dtype=np.int64),
        doc_ids=docs,
        scores=np.array([2.0, 1.0, 2.0, 1.0]),
    )
    a = align(QRELS, run)
    assert a.grades.tolist() == [0, 1, 1, UNJUDGED]  # query 1: b, a; query 2: x, y
