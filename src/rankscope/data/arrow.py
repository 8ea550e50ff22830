"""Arrow arrays from Python strings and numpy arrays, built without importing pandas.

``pa.array`` checks its input for pandas types, and the first check imports pandas (0.2-0.35 s
here) whether the input is a list or a numpy array: a cost every command paid once, for
nothing, unless it converts to pandas. These build the same arrays from their buffers
(``pa.Array.from_buffers``), where pyarrow looks for no pandas types. Numeric arrays share the
numpy array's memory, as ``pa.array`` does for them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from rankscope.data import compute as pc  # not pyarrow.compute: 50 ms to import
from rankscope.util.csvcells import NEEDS_APOSTROPHE, NEUTRALISED, NUMBER

_INT32_MAX = 2**31 - 1


def string_array(values: Sequence[str]) -> pa.Array:
    """``pa.array(values, type=pa.string())`` for a sequence of ``str`` (no nulls)."""
    joined = "".join(values)  # TypeError for an item that is not a str, like pa.array's
    data = joined.encode("utf-8")
    if len(data) == len(joined):  # every character one byte: lengths in characters are bytes
        lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    else:
        encoded = [v.encode("utf-8") for v in values]
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    if len(data) > _INT32_MAX:  # needs 64-bit offsets: as pa.array makes it (chunked)
        return pa.array(values, type=pa.string())
    offsets = np.zeros(len(values) + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:], dtype=np.int32)
    return pa.Array.from_buffers(
        pa.string(), len(values), [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )


def string_scalar(value: str) -> pa.Scalar:
    """``pa.scalar(value, pa.string())``, for a compute function's string argument (a Python
    ``str`` there is converted with ``pa.scalar``, which imports pandas)."""
    return string_array([value])[0]


def numpy_array(values: npt.NDArray[Any]) -> pa.Array:
    """``pa.array(values)`` for a 1-d numpy array of booleans, integers or floats."""
    if values.ndim != 1 or values.dtype.kind not in "biuf":
        raise TypeError(f"expected a 1-d numeric numpy array, got {values.dtype} {values.shape}")
    if values.dtype.kind == "b":  # Arrow packs booleans into bits, least significant first
        bits = np.packbits(values, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits)])
    native = np.ascontiguousarray(values, dtype=values.dtype.newbyteorder("="))
    return pa.Array.from_buffers(
        pa.from_numpy_dtype(native.dtype), len(native), [None, pa.py_buffer(native)]
    )


def to_numpy(values: pa.Array | pa.ChunkedArray) -> npt.NDArray[Any]:
    """``values.to_numpy(zero_copy_only=False)`` for booleans, integers or floats without nulls
    (``to_numpy`` goes through pyarrow's pandas conversion, which imports pandas). Integers
    and floats are a read-only view of the Arrow buffer."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    kind = values.type
    if values.null_count:
        raise ValueError(f"cannot view {kind} values with nulls as a numpy array")
    data = values.buffers()[1]
    n, start = len(values), values.offset
    if pa.types.is_boolean(kind):
        if n == 0 or data is None:
            return np.zeros(0, dtype=np.bool_)
        packed = np.frombuffer(data, dtype=np.uint8)
        bits = np.unpackbits(packed, count=start + n, bitorder="little")
        return cast(npt.NDArray[Any], bits[start:].view(np.bool_))
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
        raise TypeError(f"expected booleans, integers or floats, got {kind}")
    dtype = np.dtype(kind.to_pandas_dtype())
    if n == 0 or data is None:
        return np.zeros(0, dtype=dtype)
    view = np.frombuffer(data, dtype=dtype, count=n, offset=start * dtype.itemsize)
    view.flags.writeable = False  # Arrow data is immutable (as to_numpy's view is read-only)
    return view


def _text_columns(table: pa.Table) -> list[int]:
    return [
        i
        for i, f in enumerate(table.schema)
        if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
    ]


def neutralise_table(table: pa.Table) -> pa.Table:
    """``table`` with every text cell as :func:`rankscope.util.csvcells.neutralise` writes it
    for a CSV (vectorised; a column with nothing to change is kept as it is)."""
    for i in _text_columns(table):
        col = table.column(i)
        needs = pc.and_kleene(
            pc.match_substring_regex(col, NEEDS_APOSTROPHE),
            pc.invert(pc.match_substring_regex(col, NUMBER)),
        )
        if pc.any(needs).as_py():
            marked = pc.binary_join_element_wise("'", col, "")
            table = table.set_column(i, table.field(i), pc.if_else(needs, marked, col))
    return table


def restore_table(table: pa.Table) -> pa.Table:
    """``table`` with every text cell as :func:`rankscope.util.csvcells.restore` reads it from
    a CSV (vectorised; only a column with a cell that starts with ``'`` is looked at)."""
    for i in _text_columns(table):
        col = table.column(i)
        if not pc.any(pc.starts_with(col, "'")).as_py():
            continue
        marked = pc.match_substring_regex(col, NEUTRALISED)
        bare = pc.utf8_slice_codeunits(col, 1)
        table = table.set_column(i, table.field(i), pc.if_else(marked, bare, col))
    return table


__all__ = [
    "neutralise_table",
    "numpy_array",
    "restore_table",
    "string_array",
    "string_scalar",
    "to_numpy",
]
