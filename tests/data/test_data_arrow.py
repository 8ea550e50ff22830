"""Arrow arrays built from buffers (rankscope.data.arrow) equal pyarrow's own, without pandas."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from rankscope.data.arrow import numpy_array, string_array, string_scalar, to_numpy

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.mark.parametrize(
    "values",
    [
        [],
        [""],
        ["q1", "q1", "q2"],
        ["ü", "", "日本語", "a b"],
        ("x",) * 5,
        [str(i) for i in range(999)],
    ],
)
def test_string_array_equals_pa_array(values: list[str]) -> None:
    got = string_array(values)
    got.validate(full=True)
    assert got.equals(pa.array(values, type=pa.string()))


def test_string_array_refuses_what_is_not_a_string() -> None:
    with pytest.raises(TypeError):
        string_array(["a", None])  # type: ignore[list-item]


def test_string_scalar() -> None:
    assert string_scalar("Q0").equals(pa.scalar("Q0", pa.string()))


@pytest.mark.parametrize(
    "values",
    [
        np.array([3, -1, 7], dtype=np.int64),
        np.array([1, 2], dtype=np.uint64),
        np.array([0.5, -0.0, -np.inf]),
        np.array([1.5, 2.5]).astype(">f8"),  # big-endian (pa.array refuses it): made native
        np.arange(12, dtype=np.int32)[::3],  # not contiguous
        np.array([True, False, True] * 7),
        np.zeros(0, dtype=np.int64),
    ],
)
def test_numpy_array_equals_pa_array(values: np.ndarray) -> None:
    got = numpy_array(values)
    got.validate(full=True)
    assert got.equals(pa.array(values.astype(values.dtype.newbyteorder("="))))


def test_numpy_array_refuses_other_dtypes() -> None:
    with pytest.raises(TypeError):
        numpy_array(np.array(["a"]))
    with pytest.raises(TypeError):
        numpy_array(np.zeros((2, 2)))


def test_to_numpy_equals_pyarrow_to_numpy() -> None:
    docs = string_array(["d1", "d1", "d2", "", "d3"])
    arrays = [
        docs.is_null(),
        pc.binary_length(docs),
        pc.equal(docs.slice(1), docs.slice(0, 4)),  # booleans from an offset
        pc.dictionary_encode(docs).indices,
        numpy_array(np.array([True, False] * 9)).slice(5),
        numpy_array(np.arange(10.0)).slice(3, 4),
        pa.array([], type=pa.int64()),
    ]
    for arr in arrays:
        got, want = to_numpy(arr), arr.to_numpy(zero_copy_only=False)
        assert got.dtype == want.dtype and np.array_equal(got, want)
    chunked = pa.chunked_array([pa.array([1, 2]), pa.array([3])])
    assert np.array_equal(to_numpy(chunked), [1, 2, 3])
    view = to_numpy(pa.array([1, 2, 3]))
    assert not view.flags.writeable  # a view of immutable Arrow memory
    with pytest.raises(ValueError, match="nulls"):
        to_numpy(pa.array([1, None]))
    with pytest.raises(TypeError):
        to_numpy(docs)


def test_values_and_measures_from_python_import_no_pandas() -> None:
    """``Qrels.from_dict``, ``Run.from_dict`` and ``evaluate`` on them never touch pandas (pyarrow
    imports it at its first ``pa.array`` or ``to_numpy``); ``to_pandas`` still works."""
    code = """
import json, sys
from rankscope import Qrels, Run, evaluate
qrels = Qrels.from_dict({"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}, "q3": {"d9": 1}})
run = Run.from_dict({"q1": {"d1": 2.0, "d2": 1.0, "d4": 1.0}, "q2": {"d3": 0.5}}, name="r")
results = evaluate(qrels, run, ["map", "ndcg@10", "P@5", "recall@100"], average_over_qrels=True)
before = "pandas" in sys.modules
frame = qrels.to_pandas()
print(json.dumps([before, "pandas" in sys.modules, len(frame), results.mean("r")]))
"""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    before, after, rows, means = json.loads(done.stdout.splitlines()[-1])
    assert (before, after, rows) == (False, True, 4)
    assert means["map"] == pytest.approx((1.0 + 1.0 + 0.0) / 3)
