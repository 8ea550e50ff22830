"""align(): the run/qrels join every measure is computed from."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from rankscope.data import Qrels, Run
from rankscope.errors import InputError
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
    with pytest.raises(InputError, match=r"twice.*'q'"):
        align(QRELS, run)


def test_align_refuses_bad_depth() -> None:
    with pytest.raises(InputError, match="depth"):
        align(QRELS, RUN, depth=-1)


def test_align_empty_overlap() -> None:
    a = align(QRELS, Run.from_dict({"9": {"a": 1.0}}))
    assert a.query_ids == ()
    assert a.offsets.tolist() == [0]
    assert a.missing_query_ids == ("1", "2", "3")
