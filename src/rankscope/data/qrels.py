"""Relevance judgments as an immutable columnar value."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from rankscope.data import tabular
from rankscope.data._nested import checked_rows, nested, query_rows
from rankscope.data._source import Warner, Where
from rankscope.data.arrow import numpy_array, string_array
from rankscope.data.order import byte_key
from rankscope.errors import InputError

if TYPE_CHECKING:
    from rankscope.data._build import IntArray, QueryBlocks, StrArray


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
        """Build from ``{query_id: {doc_id: grade}}`` (the pytrec_eval / ranx shape).

        Ids that are not text are read as text (``1`` as ``"1"``). A grade that is not an
        integer (``1.0`` is one, ``1.5`` is not), an empty id or an id given twice raises
        ``InputError``."""
        where = Where(source or "<dict>", unit="row")
        docs: list[str] = []
        grades: list[int] = []
        offsets = [0]
        rows = checked_rows(data, "relevance", where)
        rows.sort(key=lambda qr: byte_key(qr[0]))
        for q, judged in rows:
            for d, g in sorted(judged, key=lambda dg: byte_key(dg[0])):
                if type(g) is not int and not (np.isfinite(g) and g == int(g)):
                    raise where.error(
                        f"relevance grade of document {d!r} in query {q!r} is not an integer",
                        value=g,
                        hint="Grades must be integers such as 0, 1, 2",
                        cls=InputError,
                    )
                docs.append(d)
                grades.append(int(g))
            offsets.append(len(docs))
        return cls(
            query_ids=tuple(q for q, _ in rows),
            offsets=np.asarray(offsets, dtype=np.int64),
            doc_ids=string_array(docs),
            grades=np.asarray(grades, dtype=np.int64),
            source=source,
        )

    @classmethod
    def from_pandas(cls, frame: Any, *, strict: bool = True) -> Qrels:
        """Build from a DataFrame with query id, doc id and grade columns.

        Column names as :func:`rankscope.data.read_qrels` accepts them (``query_id``/``qid``,
        ``doc_id``/``docno``, ``relevance``/``rel``/``score``...). A pyarrow Table or a dict
        is read the same way; a file is for :func:`~rankscope.data.read_qrels`.
        """
        table = tabular.in_memory_table(frame, "relevance")
        if table is None:
            raise InputError(
                "cannot read this kind of object as qrels",
                value=type(frame).__name__,
                hint="Pass a pandas DataFrame (or read a file with rankscope.data.read_qrels)",
            )
        return qrels_from_table(*table, strict=strict, warn=Warner(None))

    def to_pandas(self) -> Any:
        """A DataFrame with columns ``query_id, doc_id, relevance``."""
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


def build_qrels(
    qids: StrArray | QueryBlocks,
    docs: StrArray,
    grades: npt.NDArray[np.int64],
    *,
    where: Where,
    lines: IntArray | None = None,
    source: str | None = None,
    keep_first: bool = False,
) -> Qrels:
    """Sort rows into a ``Qrels`` (query, then doc id in byte order), refusing a document
    judged twice for one query, or with ``keep_first`` keeping its first judgment only."""
    from rankscope.data._build import qrels_columns  # pyarrow.compute: 30 ms a Qrels need not load

    columns = qrels_columns(qids, docs, grades, where=where, lines=lines, keep_first=keep_first)
    return Qrels(*columns, source=source)


def qrels_from_table(
    table: pa.Table,
    where: Where,
    *,
    strict: bool,
    warn: Warner,
    lines: npt.NDArray[np.int64] | None = None,
) -> Qrels:
    """Qrels from a table (:mod:`rankscope.data.tabular` finds its columns by name); ``lines``
    gives each row's line for messages (default: row number)."""
    rows = tabular.qrels_rows(table, where, strict=strict, warn=warn, lines=lines)
    return build_qrels(
        rows.query_ids, rows.doc_ids, rows.values, where=where, lines=rows.lines, source=where.name
    )


def qrels_table(qrels: Qrels) -> pa.Table:
    """Columns ``query_id, doc_id, relevance`` in qrels order."""
    row_q = np.repeat(np.arange(len(qrels.query_ids)), np.diff(qrels.offsets))
    qids = string_array(qrels.query_ids).take(numpy_array(row_q))
    return pa.table(
        {
            "query_id": qids,
            "doc_id": qrels.doc_ids,
            "relevance": numpy_array(np.asarray(qrels.grades, dtype=np.int64)),
        }
    )
