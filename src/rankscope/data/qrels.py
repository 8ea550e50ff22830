"""Relevance judgments as an immutable columnar value."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from rankscope.data._nested import nested, query_rows
from rankscope.data.arrow import string_array
from rankscope.data.order import byte_key


@dataclass(frozen=True, eq=False, slots=True)
class Qrels:
    """(query_id, doc_id) -> integer grade, grouped by query.

    Layout (all rows of one query are contiguous, queries in ``query_ids`` order):

    - ``query_ids``: unique query ids, sorted by byte order (trec_eval's ``strcmp`` order).
    - ``offsets``: int64, length ``len(query_ids) + 1``; rows of query ``i`` are
      ``offsets[i]:offsets[i+1]``.
    - ``doc_ids``: pyarrow string array, one per row, sorted by byte order within a query.
    - ``grades``: int64, one per row; may be negative (trec_eval semantics: judged, not relevant).

    Build with the readers in :mod:`rankscope.data` or :meth:`from_dict`; never mutate the arrays.
    """

    query_ids: tuple[str, ...]
    offsets: npt.NDArray[np.int64]
    doc_ids: pa.Array
    grades: npt.NDArray[np.int64]
    source: str | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Mapping[str, int]], source: str | None = None) -> Qrels:
        """Build from ``{query_id: {doc_id: grade}}`` (the pytrec_eval / ranx shape)."""
        qids = sorted((str(q) for q in data), key=byte_key)
        docs: list[str] = []
        grades: list[int] = []
        offsets = [0]
        for q in qids:
            judged = data[q]
            for d in sorted((str(d) for d in judged), key=byte_key):
                docs.append(d)
                grades.append(int(judged[d]))
            offsets.append(len(docs))
        return cls(
            query_ids=tuple(qids),
            offsets=np.asarray(offsets, dtype=np.int64),
            doc_ids=string_array(docs),
            grades=np.asarray(grades, dtype=np.int64),
            source=source,
        )

    @classmethod
    def from_pandas(cls, frame: Any, *, strict: bool = True) -> Qrels:
        """Build from a DataFrame with query id, doc id and grade columns.

        Column names as :func:`rankscope.data.read_qrels` accepts them (``query_id``/``qid``,
        ``doc_id``/``docno``, ``relevance``/``rel``/``score``...).
        """
        from rankscope.data.readers import read_qrels

        return read_qrels(frame, strict=strict)

    def to_pandas(self) -> Any:
        """A DataFrame with columns ``query_id, doc_id, relevance``."""
        from rankscope.data.writers import qrels_table

        return qrels_table(self).to_pandas()

    def __len__(self) -> int:
        return int(self.grades.shape[0])

    @property
    def num_queries(self) -> int:
        return len(self.query_ids)

    def query(self, query_id: str) -> dict[str, int]:
        """Judgments of one query as ``{doc_id: grade}`` (empty when the query is unjudged)."""
        i = self._index().get(query_id)
        return {} if i is None else dict(query_rows(self.offsets, i, self.doc_ids, self.grades))

    def to_dict(self) -> dict[str, dict[str, int]]:
        return nested(self.query_ids, self.offsets, self.doc_ids, self.grades)

    def __iter__(self) -> Iterator[tuple[str, str, int]]:
        """Rows as ``(query_id, doc_id, grade)``."""
        docs = self.doc_ids.to_pylist()
        grades = self.grades.tolist()
        for i, q in enumerate(self.query_ids):
            for r in range(int(self.offsets[i]), int(self.offsets[i + 1])):
                yield q, docs[r], grades[r]

    def _index(self) -> dict[str, int]:
        return {q: i for i, q in enumerate(self.query_ids)}

    def __repr__(self) -> str:
        src = f", source={self.source!r}" if self.source else ""
        return f"Qrels({self.num_queries} queries, {len(self)} judgments{src})"
