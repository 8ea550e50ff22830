"""Join a run to its qrels: the ranked relevance grades every measure is computed from.

The result (:class:`Aligned`) is columnar: one row per ranked document of every evaluated query,
queries contiguous, so that measures are segment operations over ``offsets`` rather than Python
loops over queries.  It follows trec_eval 10 (``form_res_rels.c``):

- only queries present in both the run and the qrels are evaluated; qrels queries missing from the
  run are listed in ``missing_query_ids`` (trec_eval's ``-c`` counts them with every measure 0);
- ranking is score descending, ties broken by doc id descending (the :class:`Run` row order);
- ``depth`` (``-M``) keeps the top ``depth`` rows of each query, *then* ``judged_only`` (``-J``)
  drops the rows trec_eval treats as unjudged (doc absent from the qrels, or a negative grade,
  which trec_eval reads as "in the pool but not judged") and re-ranks the rest;
- a doc retrieved twice for one query is an error, as in trec_eval.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from rankscope.data import compute as pc  # not pyarrow.compute: 50 ms to import
from rankscope.data import fingerprints
from rankscope.data.arrow import numpy_array, to_numpy
from rankscope.data.qrels import Qrels
from rankscope.data.run import Run
from rankscope.errors import DuplicateError, InputError
from rankscope.metrics import hash_index as keys
from rankscope.metrics.segments import (
    offsets_from_counts,
    positions,
    segment_count,
    segment_ids,
)

#: Grade of a retrieved doc that is absent from the qrels.  The smallest int64, so that
#: ``grades >= level`` is false for every level and ``np.maximum(grades, 0)`` gives gain 0.
UNJUDGED: int = int(np.iinfo(np.int64).min)


@dataclass(frozen=True, slots=True)
class Aligned:
    """Ranked qrels grades of one run, all evaluated queries at once.

    - ``query_ids``: queries in both the run and the qrels, byte order.
    - ``offsets``: int64, ``len(query_ids) + 1``; ranked rows of query ``i`` are
      ``offsets[i]:offsets[i+1]`` (after ``depth`` and ``judged_only``).
    - ``grades``: int64 per ranked row in trec_eval order: the doc's qrels grade (negative grades
      kept as they are), or :data:`UNJUDGED` when the doc is not in the qrels. Made on first
      use from the two below: most ranked rows are unjudged, and the common measures read only
      the judged ones.
    - ``judged``: bool per ranked row: the doc is in the qrels (any grade).
    - ``judged_grades``: int64 per judged row, in row order: its qrels grade.
    - ``num_rel``: per query, qrels docs counted relevant by trec_eval: grade ``>= rel_level`` and
      ``>= 0`` (trec_eval never counts a negative grade as relevant).
    - ``num_judged``: per query, qrels docs of any grade.
    - ``qrels_offsets`` / ``qrels_grades``: per query, all its qrels grades sorted descending
      (the ideal ranking for nDCG-like measures).
    - ``missing_query_ids``: qrels queries absent from the run, byte order.
    """

    run_name: str
    query_ids: tuple[str, ...]
    offsets: NDArray[np.int64]
    judged: NDArray[np.bool_]
    judged_grades: NDArray[np.int64]
    num_rel: NDArray[np.int64]
    num_judged: NDArray[np.int64]
    qrels_offsets: NDArray[np.int64]
    qrels_grades: NDArray[np.int64]
    missing_query_ids: tuple[str, ...]
    rel_level: int
    _dense: list[NDArray[np.int64]] = field(default_factory=list, repr=False, compare=False)

    @property
    def grades(self) -> NDArray[np.int64]:
        if not self._dense:
            grades = np.full(self.judged.shape[0], UNJUDGED, dtype=np.int64)
            grades[self.judged] = self.judged_grades
            self._dense.append(grades)
        return self._dense[0]

    @property
    def num_queries(self) -> int:
        return len(self.query_ids)

    @property
    def num_ret(self) -> NDArray[np.int64]:
        """Ranked rows per query."""
        return np.diff(self.offsets)

    def query_index(self) -> NDArray[np.int64]:
        """Per ranked row: the index of its query in ``query_ids``."""
        return segment_ids(self.offsets)

    def positions(self) -> NDArray[np.int64]:
        """Per ranked row: its 0-based rank within its query."""
        return positions(self.offsets)


def align(
    qrels: Qrels,
    run: Run,
    *,
    depth: int | None = None,
    rel_level: int = 1,
    judged_only: bool = False,
) -> Aligned:
    """Join ``run`` to ``qrels`` the way trec_eval does (see the module docstring).

    Raises :class:`~rankscope.errors.InputError` when ``depth`` is negative or when a run
    retrieves the same doc twice for one query.
    """
    if depth is not None and depth < 0:
        raise InputError(
            "depth must not be negative",
            value=depth,
            hint="Pass depth=None to keep every retrieved document",
        )
    qrels_index = {q: i for i, q in enumerate(qrels.query_ids)}
    run_to_qrels = np.fromiter(
        (qrels_index.get(q, -1) for q in run.query_ids), dtype=np.int64, count=run.num_queries
    )
    in_both = run_to_qrels >= 0
    query_ids = tuple(q for q, keep in zip(run.query_ids, in_both.tolist(), strict=True) if keep)
    missing = query_split(qrels, run)[1]
    qrels_of_query = run_to_qrels[in_both]  # qrels query index of each evaluated query
    nq = len(query_ids)

    # Ranked rows of the evaluated queries, cut at `depth`.
    counts = np.diff(run.offsets)[in_both]
    if depth is not None:
        counts = np.minimum(counts, depth)
    offsets = offsets_from_counts(counts)
    rows: NDArray[np.int64] | None = None
    if int(offsets[-1]) == len(run):  # every row kept: no gather needed
        run_docs = run.doc_ids
    else:
        rows = positions(offsets) + np.repeat(run.offsets[:-1][in_both], counts)
        run_docs = pc.take(run.doc_ids, numpy_array(rows))

    # Look every ranked (query, doc) up in the qrels.
    qrels_query = segment_ids(qrels.offsets)
    joined = _join_hashed(qrels, qrels_query, run, run_docs, rows, in_both, counts)
    if joined is None:
        row_qrels_query = np.repeat(qrels_of_query, counts)
        joined = _join_exact(qrels, qrels_query, run_docs, row_qrels_query)
    judged, qrels_row, duplicate = joined
    if duplicate >= 0:
        _refuse_duplicate(run, run_docs, segment_ids(offsets), query_ids, duplicate)
    judged_grades = qrels.grades[qrels_row]  # of the judged rows, in row order

    if judged_only:  # the rows left are the judged ones with a grade >= 0
        keep = judged_grades >= 0
        kept_query = np.searchsorted(offsets, np.flatnonzero(judged)[keep], side="right") - 1
        judged_grades = judged_grades[keep]
        judged = np.ones(judged_grades.shape[0], dtype=np.bool_)
        offsets = offsets_from_counts(np.bincount(kept_query, minlength=nq).astype(np.int64))

    # Per evaluated query: its qrels, grades sorted descending.
    q_counts = np.diff(qrels.offsets)[qrels_of_query]
    q_starts = qrels.offsets[:-1][qrels_of_query]
    qrels_offsets = offsets_from_counts(q_counts)
    q_grades = qrels.grades[positions(qrels_offsets) + np.repeat(q_starts, q_counts)]
    q_grades = q_grades[np.lexsort((-q_grades, segment_ids(qrels_offsets)))]
    num_rel = segment_count((q_grades >= rel_level) & (q_grades >= 0), qrels_offsets)

    return Aligned(
        run_name=run.name,
        query_ids=query_ids,
        offsets=offsets,
        judged=judged,
        judged_grades=judged_grades,
        num_rel=num_rel,
        num_judged=q_counts.astype(np.int64),
        qrels_offsets=qrels_offsets,
        qrels_grades=q_grades,
        missing_query_ids=missing,
        rel_level=rel_level,
    )


def _lookup(
    qrels_doc: NDArray[np.int64],
    qrels_query: NDArray[np.int64],
    n_docs: int,
    run_doc: NDArray[np.int64],
    run_query: NDArray[np.int64],
) -> tuple[NDArray[np.bool_], NDArray[np.int64]]:
    """Which ranked rows are judged, and the qrels row of each judged one.

    Docs judged for a single query (the usual case) go through a direct table indexed by doc
    number (a few O(n) gathers); docs judged for several queries through a binary search over
    sorted (query, doc) keys.
    """
    retrieved = np.flatnonzero(qrels_doc >= 0)  # qrels rows whose doc some query retrieved
    codes = qrels_doc[retrieved]
    times_judged = np.bincount(codes, minlength=n_docs)
    once = times_judged[codes] == 1
    table_query = np.full(n_docs, -1, dtype=np.int64)
    table_row = np.zeros(n_docs, dtype=np.int64)
    table_query[codes[once]] = qrels_query[retrieved[once]]
    table_row[codes[once]] = retrieved[once]
    judged = table_query[run_doc] == run_query
    qrels_row = np.zeros(run_doc.shape[0], dtype=np.int64)
    qrels_row[judged] = table_row[run_doc[judged]]
    many = np.flatnonzero(times_judged[run_doc] > 1)
    if many.shape[0]:
        shared = retrieved[~once]
        keys = qrels_query[shared] * n_docs + qrels_doc[shared]
        order = np.argsort(keys)
        sorted_keys = keys[order]
        wanted = run_query[many] * n_docs + run_doc[many]
        at = np.minimum(np.searchsorted(sorted_keys, wanted), sorted_keys.shape[0] - 1)
        hit = sorted_keys[at] == wanted
        judged[many[hit]] = True
        qrels_row[many[hit]] = shared[order[at[hit]]]
    return judged, qrels_row[judged]


def query_split(qrels: Qrels, run: Run) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The qrels queries the run has and those it lacks, each in byte order."""
    in_run = set(run.query_ids)
    shared = tuple(q for q in qrels.query_ids if q in in_run)
    missing = tuple(q for q in qrels.query_ids if q not in in_run)
    return shared, missing


def _join_hashed(
    qrels: Qrels,
    qrels_query: NDArray[np.int64],
    run: Run,
    run_docs: pa.Array,
    rows: NDArray[np.int64] | None,
    in_both: NDArray[np.bool_],
    counts: NDArray[np.int64],
) -> tuple[NDArray[np.bool_], NDArray[np.int64], int] | None:
    """Join through 64-bit (query, doc) fingerprints (:mod:`rankscope.data.fingerprints`): the
    ones the reader kept when it has (hashing only the qrels doc ids), else computed here.
    Every match is checked against the strings; ``None`` (use the exact path) when the doc ids
    are not plain strings or a fingerprint ever collides.

    ``rows``: the run rows ranked (``None``: all of them, in order), ``counts`` of the run
    queries ``in_both``.  Returns (judged per row, qrels row of each judged one, a
    duplicated row or -1).
    """
    if not (keys.usable(run_docs) and keys.usable(qrels.doc_ids)):
        return None
    kept = fingerprints.recall(run)
    if kept is not None:  # the reader refused repeated (query, doc) pairs already
        probe = kept if rows is None else kept[rows]
    else:
        row_run_query = np.repeat(np.flatnonzero(in_both), counts)  # run query of each row
        probe = fingerprints.pair_keys(row_run_query, run_docs, run.num_queries)
    qbits = fingerprints.pair_key_bits(run.num_queries)
    run_index = {q: i for i, q in enumerate(run.query_ids)}
    qrels_to_run = np.fromiter(
        (run_index.get(q, -1) for q in qrels.query_ids), dtype=np.int64, count=qrels.num_queries
    )
    row_run = qrels_to_run[qrels_query]
    usable_rows = np.flatnonzero(row_run >= 0)  # qrels rows of queries the run has
    qrels_keys = fingerprints.hash_strings(pc.take(qrels.doc_ids, numpy_array(usable_rows)))
    qrels_keys >>= np.uint64(qbits)
    qrels_keys |= row_run[usable_rows].astype(np.uint64) << np.uint64(64 - qbits)
    index = keys.SpreadHashIndex(qrels_keys)
    matched, found = _lookup_blocks(index, probe)
    judged = np.zeros(probe.shape[0], dtype=np.bool_)
    judged[matched] = True
    qrels_row = usable_rows[found]
    if matched.shape[0]:
        same = pc.equal(
            pc.take(run_docs, numpy_array(matched)), pc.take(qrels.doc_ids, numpy_array(qrels_row))
        )
        if not pc.all(same).as_py():
            return None
    duplicate = -1
    if kept is None:
        repeat = fingerprints.find_duplicate(row_run_query, run_docs, run.num_queries, probe)
        duplicate = -1 if repeat is None else repeat[1]
    return judged, qrels_row, duplicate


def _lookup_blocks(
    index: keys.SpreadHashIndex, probe: NDArray[np.uint64]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The probes found in ``index`` (ascending) and their positions there: cache-sized blocks
    on threads (numpy releases the GIL)."""
    n = probe.shape[0]
    bounds = [(a, min(n, a + keys.BLOCK_ROWS)) for a in range(0, n, keys.BLOCK_ROWS)]

    def work(b: tuple[int, int]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        maybe, at = index.lookup_candidates(probe[b[0] : b[1]])
        hit = at >= 0
        return maybe[hit] + b[0], at[hit]

    workers = min(len(bounds), os.cpu_count() or 1)
    if workers <= 1:
        parts = [work(b) for b in bounds]
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            parts = list(pool.map(work, bounds))
    if not parts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _join_exact(
    qrels: Qrels,
    qrels_query: NDArray[np.int64],
    run_docs: pa.Array,
    run_query: NDArray[np.int64],
) -> tuple[NDArray[np.bool_], NDArray[np.int64], int]:
    """Join through doc numbers from one hash pass of pyarrow over the run's doc ids."""
    encoded = pc.dictionary_encode(run_docs)
    run_doc = np.asarray(to_numpy(encoded.indices), dtype=np.int64)
    n_docs = len(encoded.dictionary)
    found = pc.index_in(qrels.doc_ids, value_set=encoded.dictionary)  # null: not in the run
    qrels_doc_np = np.full(len(found), -1, dtype=np.int64)
    qrels_doc_np[to_numpy(pc.is_valid(found))] = to_numpy(pc.drop_null(found))
    judged, qrels_row = _lookup(qrels_doc_np, qrels_query, n_docs, run_doc, run_query)
    duplicate = -1
    run_keys = run_query * n_docs + run_doc
    if run_keys.shape[0] > 1:
        keys = np.sort(run_keys)
        same = np.flatnonzero(keys[1:] == keys[:-1])
        if same.shape[0]:
            duplicate = int(np.flatnonzero(run_keys == keys[same[0]])[-1])
    return judged, qrels_row, duplicate


def _refuse_duplicate(
    run: Run,
    run_docs: pa.Array,
    row_query: NDArray[np.int64],
    query_ids: tuple[str, ...],
    row: int,
) -> None:
    """trec_eval refuses a run that retrieves one doc twice for a query; so do we."""
    raise DuplicateError(
        f"duplicate document {run_docs[row].as_py()!r} for query "
        f"{query_ids[int(row_query[row])]!r} in run {run.name!r}",
        path=run.source,
        hint="Keep one line per (query, document) in the run, as trec_eval requires",
    )
