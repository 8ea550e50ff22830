"""rankscope.data.compute: the same results as pyarrow.compute and np.unique."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pac

from rankscope.data import compute as pc


def test_the_functions_are_pyarrow_computes() -> None:
    s = pa.array(["b", "'a", "", None, "=1", "b"])
    t = pa.array(["b", "a", "c", "d", "e", "f"])
    m = pa.array([True, False, None, True, False, True])
    n = pa.array([3, 1, 2, 3])
    table = pa.table({"q": [2, 1, 1, 2], "d": ["x", "b", "a", "x"]})
    same = [
        (pc.all(m), pac.all(m)),
        (pc.any(m), pac.any(m)),
        (pc.min(n), pac.min(n)),
        (pc.and_kleene(m, pc.invert(m)), pac.and_kleene(m, pac.invert(m))),
        (pc.equal(s, t), pac.equal(s, t)),
        (pc.less(s, t), pac.less(s, t)),
        (pc.if_else(m, s, t), pac.if_else(m, s, t)),
        (pc.binary_length(s), pac.binary_length(s)),
        (pc.binary_join_element_wise("'", s, ""), pac.binary_join_element_wise("'", s, "")),
        (pc.match_substring_regex(s, "^[=']"), pac.match_substring_regex(s, "^[=']")),
        (pc.starts_with(s, "'"), pac.starts_with(s, "'")),
        (pc.utf8_slice_codeunits(s, 1), pac.utf8_slice_codeunits(s, 1)),
        (pc.dictionary_encode(s), pac.dictionary_encode(s)),
        (pc.run_end_encode(n), pac.run_end_encode(n)),
        (pc.index_in(t, value_set=s), pac.index_in(t, value_set=s)),
        (
            pc.sort_indices(table, sort_keys=[("q", "ascending"), ("d", "descending")]),
            pac.sort_indices(table, sort_keys=[("q", "ascending"), ("d", "descending")]),
        ),
        (pc.take(s, pa.array([5, 0, 3])), s.take(pa.array([5, 0, 3]))),
        (pc.filter(s, m), s.filter(m)),
        (pc.is_valid(s), s.is_valid()),
        (pc.drop_null(s), s.drop_null()),
    ]
    for i, (ours, theirs) in enumerate(same):
        assert ours.equals(theirs), i
    assert pc.index_in(t, value_set=s).to_pylist() == [0, None, None, None, None, None]


def test_distinct_is_np_unique() -> None:
    rng = np.random.default_rng(7)
    cases = [np.zeros(0, dtype=np.int64), np.array([[3, 1], [1, 2]]), np.array([2.5, np.nan, 1.0])]
    cases += [rng.integers(-5, 5, size) for size in (1, 2, 10, 1000)]
    for values in cases:
        got, expected = pc.distinct(values), np.unique(values)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)
