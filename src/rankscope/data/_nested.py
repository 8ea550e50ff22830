"""The ``{query_id: {doc_id: value}}`` views of a columnar Qrels or Run."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa


def query_rows(
    offsets: npt.NDArray[np.int64], i: int, doc_ids: pa.Array, values: npt.NDArray[Any]
) -> list[tuple[str, Any]]:
    """``(doc_id, value)`` of the rows of query number ``i``, in order."""
    lo, hi = int(offsets[i]), int(offsets[i + 1])
    docs = doc_ids.slice(lo, hi - lo).to_pylist()
    return list(zip(docs, values[lo:hi].tolist(), strict=True))


def nested(
    query_ids: tuple[str, ...],
    offsets: npt.NDArray[np.int64],
    doc_ids: pa.Array,
    values: npt.NDArray[Any],
) -> dict[str, dict[str, Any]]:
    """Every query's rows as ``{doc_id: value}``, in one pass over the rows (per-query slices
    would look the query up and convert each slice on its own)."""
    docs = doc_ids.to_pylist()
    vals = values.tolist()
    bounds = offsets.tolist()
    return {
        q: dict(zip(docs[bounds[i] : bounds[i + 1]], vals[bounds[i] : bounds[i + 1]], strict=True))
        for i, q in enumerate(query_ids)
    }
