"""``{query_id: {doc_id: value}}``: the checked reading of one, and the views of a columnar
Qrels or Run as one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from rankscope.data._source import Where
from rankscope.errors import InputError

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

#: one query's rows: (query id, [(doc id, value), ...]), ids as text
NestedRows = tuple[str, list[tuple[str, Any]]]


def checked_rows(data: Mapping[Any, Any], value_role: str, where: Where) -> list[NestedRows]:
    """The rows of ``{query_id: {doc_id: value}}``, ids as text (``1`` reads as ``"1"``).

    Refuses, naming the query and document: a query whose value is not a mapping, an empty id,
    two keys that are one id once written as text (``1`` and ``"1"``), a value that is not a
    number (``True`` included) and an integer beyond 64 bits.
    """
    out: list[NestedRows] = []
    seen: set[str] = set()
    for q, inner in data.items():
        qid = q if type(q) is str else str(q)
        if not isinstance(inner, Mapping):
            raise where.error(
                f"value of query {q!r} is not a mapping",
                value=type(inner).__name__,
                hint="Give {query_id: {doc_id: " + value_role + "}}",
                cls=InputError,
            )
        if not qid or qid in seen:
            problem = "an empty query id" if not qid else f"query id {qid!r} is given twice"
            raise where.error(problem, hint="Give every query one non-empty id", cls=InputError)
        seen.add(qid)
        rows: list[tuple[str, Any]] = []
        converted = False
        for d, v in inner.items():
            if type(v) is float:  # the common case first
                pass
            elif type(v) is not int and not _is_number(v):
                raise where.error(
                    f"{value_role} of document {d!r} in query {q!r} is not a number",
                    value=v,
                    hint=f"Give every {value_role} as a number",
                    cls=InputError,
                )
            elif not isinstance(v, np.floating) and not _INT64_MIN <= v <= _INT64_MAX:
                raise where.error(
                    f"{value_role} of document {d!r} in query {q!r} is out of range",
                    value=v,
                    hint=f"Give every {value_role} as a 64-bit integer or a float",
                    cls=InputError,
                )
            if type(d) is not str:
                d, converted = str(d), True
            rows.append((d, v))
        if "" in inner or (converted and len({d for d, _ in rows}) < len(rows)):
            raise where.error(
                f"query {qid!r} has an empty or repeated document id",
                hint="Give every document of a query one distinct, non-empty id",
                cls=InputError,
            )
        out.append((qid, rows))
    return out


def _is_number(value: object) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float | np.integer | np.floating)


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
