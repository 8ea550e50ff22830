"""Ranked results as an immutable columnar value, ordered the way trec_eval orders them."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from rankscope.data import fingerprints, tabular
from rankscope.data._nested import checked_rows, nested, query_rows
from rankscope.data._source import Warner, Where
from rankscope.data.arrow import numpy_array, string_array
from rankscope.data.order import byte_key
from rankscope.errors import InputError

if TYPE_CHECKING:
    from rankscope.data._build import IntArray, QueryBlocks, StrArray


@dataclass(frozen=True, eq=False, slots=True, weakref_slot=True)
class Run:
    """query_id -> ranked (doc_id, score), with a run name.

    Layout (all rows of one query are contiguous, queries in ``query_ids`` order):

    - ``query_ids``: unique query ids, sorted by byte order (trec_eval's ``strcmp`` order).
    - ``offsets``: int64, length ``len(query_ids) + 1``; rows of query ``i`` are
      ``offsets[i]:offsets[i+1]``.
    - ``doc_ids``: pyarrow string array; within a query rows are in trec_eval's order:
      score descending, ties broken by doc_id descending (byte order). A file's rank column is
      ignored, as trec_eval ignores it.
    - ``scores``: float64, one per row.

    Build with the readers in :mod:`rankscope.data` or :meth:`from_dict`; never mutate the arrays.
    """

    name: str
    query_ids: tuple[str, ...]
    offsets: npt.NDArray[np.int64]
    doc_ids: pa.Array
    scores: npt.NDArray[np.float64]
    source: str | None = None

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Mapping[str, float]], name: str = "run", source: str | None = None
    ) -> Run:
        """Build from ``{query_id: {doc_id: score}}`` (the pytrec_eval / ranx shape).

        Ids that are not text are read as text (``1`` as ``"1"``). A value that is not a number,
        a NaN or infinite score, an empty id or an id given twice raises ``InputError``."""
        where = Where(source or "<dict>", unit="row")
        docs: list[str] = []
        scores: list[float] = []
        offsets = [0]
        rows = checked_rows(data, "score", where)
        rows.sort(key=lambda qr: byte_key(qr[0]))
        for _, ranking in rows:
            ranked = sorted(
                ((d, float(s)) for d, s in ranking),
                key=lambda ds: (-ds[1], _neg_bytes(ds[0])),
            )
            for d, s in ranked:
                docs.append(d)
                scores.append(s)
            offsets.append(len(docs))
        values = np.asarray(scores, dtype=np.float64)
        if not np.isfinite(values).all():
            i = int(np.flatnonzero(~np.isfinite(values))[0])
            q = rows[int(np.searchsorted(offsets, i, side="right")) - 1][0]
            raise where.error(
                f"score of document {docs[i]!r} in query {q!r} is NaN or infinite",
                value=scores[i],
                hint="Scores must be finite numbers",
                cls=InputError,
            )
        return cls(
            name=name,
            query_ids=tuple(q for q, _ in rows),
            offsets=np.asarray(offsets, dtype=np.int64),
            doc_ids=string_array(docs),
            scores=values,
            source=source,
        )

    @classmethod
    def from_pandas(cls, frame: Any, name: str | None = None, *, strict: bool = True) -> Run:
        """Build from a DataFrame with query id, doc id and score columns.

        Column names as :func:`rankscope.data.read_run` accepts them (``query_id``/``qid``,
        ``doc_id``/``docno``, ``score``...); rows are ordered the trec_eval way. A pyarrow Table
        or a dict is read the same way; a file is for :func:`~rankscope.data.read_run`.
        """
        table = tabular.in_memory_table(frame, "score")
        if table is None:
            raise InputError(
                "cannot read this kind of object as a run",
                value=type(frame).__name__,
                hint="Pass a pandas DataFrame (or read a file with rankscope.data.read_run)",
            )
        return run_from_table(
            *table, name=name, default_name="run", strict=strict, warn=Warner(None)
        )

    def to_pandas(self) -> Any:
        """A DataFrame with columns ``query_id, doc_id, rank, score, run_id`` in run order."""
        return run_table(self).to_pandas()

    def __len__(self) -> int:
        return int(self.scores.shape[0])

    @property
    def num_queries(self) -> int:
        return len(self.query_ids)

    def ranking(self, query_id: str) -> list[tuple[str, float]]:
        """The ranked ``(doc_id, score)`` list of one query (empty when absent)."""
        try:
            i = self.query_ids.index(query_id)
        except ValueError:
            return []
        return query_rows(self.offsets, i, self.doc_ids, self.scores)

    def to_dict(self) -> dict[str, dict[str, float]]:
        return nested(self.query_ids, self.offsets, self.doc_ids, self.scores)

    def __iter__(self) -> Iterator[tuple[str, str, int, float]]:
        """Rows as ``(query_id, doc_id, rank, score)``, rank 1-based in trec_eval order."""
        docs = self.doc_ids.to_pylist()
        scores = self.scores.tolist()
        for i, q in enumerate(self.query_ids):
            lo = int(self.offsets[i])
            for r in range(lo, int(self.offsets[i + 1])):
                yield q, docs[r], r - lo + 1, scores[r]

    def __repr__(self) -> str:
        return f"Run({self.name!r}, {self.num_queries} queries, {len(self)} rows)"


class _neg_bytes:  # a sort key that reverses the byte order of a string
    __slots__ = ("b",)

    def __init__(self, s: str) -> None:
        self.b = byte_key(s)

    def __lt__(self, other: _neg_bytes) -> bool:
        return self.b > other.b

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _neg_bytes) and self.b == other.b

    def __hash__(self) -> int:
        return hash(self.b)


def renamed(run: Run, name: str) -> Run:
    """``run`` under another name (the same rows; a reader's fingerprints stay valid)."""
    if run.name == name:
        return run
    copy = dataclasses.replace(run, name=name)
    keys = fingerprints.recall(run)
    if keys is not None:
        fingerprints.remember(copy, keys)
    return copy


def unique_run_names(runs: Sequence[Run]) -> list[Run]:
    """``runs``, renamed where names repeat, so that every run has its own name.

    Runs named alike (two files with the same runid, say) are named by their file instead:
    the file name without ``.gz`` and its last suffix (``bm25-v2`` for ``bm25-v2.run.gz``),
    else the whole file name; runs that still collide get ``-2``, ``-3``... in order. A run
    whose name is unique keeps it.
    """
    names = [r.name for r in runs]
    if len(set(names)) == len(names):
        return list(runs)
    for label in (_file_stem, _file_name):
        candidate = [label(r) if names.count(r.name) > 1 else r.name for r in runs]
        if None not in candidate and len(set(candidate)) == len(candidate):
            return [renamed(r, str(n)) for r, n in zip(runs, candidate, strict=True)]
    taken = set(names)
    seen: dict[str, int] = {}
    out: list[Run] = []
    for r in runs:
        seen[r.name] = seen.get(r.name, 0) + 1
        if seen[r.name] == 1:
            out.append(r)
            continue
        n = seen[r.name]
        while f"{r.name}-{n}" in taken:
            n += 1
        taken.add(f"{r.name}-{n}")
        out.append(renamed(r, f"{r.name}-{n}"))
    return out


def _file_name(run: Run) -> str | None:
    return Path(run.source).name if run.source and not run.source.startswith("<") else None


def _file_stem(run: Run) -> str | None:
    name = _file_name(run)
    if name is None:
        return None
    path = Path(name)
    if path.suffix.lower() in (".gz", ".gzip"):
        path = Path(path.stem)
    return path.stem or None


def build_run(
    qids: StrArray | QueryBlocks,
    docs: StrArray,
    scores: npt.NDArray[np.float64] | pa.ChunkedArray,
    *,
    name: str,
    where: Where,
    lines: IntArray | None = None,
    source: str | None = None,
    keep_duplicates: bool = False,
) -> Run:
    """Group, order and check rows into a ``Run`` (scores already validated by the reader).

    A document repeated for a query is refused, unless ``keep_duplicates`` (trec_eval's
    reading: it refuses a repeat only in a query it evaluates, within the depth it reads).
    The fingerprints of the (query, doc) pairs are kept beside the run
    (:func:`rankscope.data.fingerprints.remember`).
    """
    from rankscope.data._build import run_columns  # pyarrow.compute: 30 ms a Run need not load

    columns = run_columns(
        qids, docs, scores, where=where, lines=lines, keep_duplicates=keep_duplicates
    )
    run = Run(
        name=name,
        query_ids=columns.query_ids,
        offsets=columns.offsets,
        doc_ids=columns.doc_ids,
        scores=columns.scores,
        source=source,
    )
    if columns.keys is not None:
        fingerprints.remember(run, columns.keys)
    return run


def run_from_table(
    table: pa.Table,
    where: Where,
    *,
    name: str | None,
    default_name: str,
    strict: bool,
    warn: Warner,
    lines: npt.NDArray[np.int64] | None = None,
) -> Run:
    """A run from a table (:mod:`rankscope.data.tabular` finds its columns by name); ``lines``
    gives each row's line for messages (default: row number). Its name: ``name``, else the
    table's run-name column's last value, else ``default_name``."""
    rows = tabular.run_rows(table, where, name=name, strict=strict, warn=warn, lines=lines)
    return build_run(
        rows.query_ids,
        rows.doc_ids,
        rows.values,
        name=rows.name or default_name,
        where=where,
        lines=rows.lines,
        source=where.name,
    )


def run_table(run: Run) -> pa.Table:
    """Columns ``query_id, doc_id, rank, score, run_id`` in run order."""
    lengths = np.diff(run.offsets)
    row_q = np.repeat(np.arange(len(run.query_ids)), lengths)
    ranks = np.arange(len(run), dtype=np.int64) - np.repeat(run.offsets[:-1], lengths) + 1
    qids = string_array(run.query_ids).take(numpy_array(row_q))
    return pa.table(
        {
            "query_id": qids,
            "doc_id": run.doc_ids,
            "rank": numpy_array(ranks),
            "score": numpy_array(np.asarray(run.scores, dtype=np.float64)),
            "run_id": pa.DictionaryArray.from_arrays(
                numpy_array(np.zeros(len(run), dtype=np.int32)), string_array([run.name])
            ),
        }
    )
