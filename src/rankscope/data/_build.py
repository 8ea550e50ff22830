"""Turn parsed columns into ``Run`` / ``Qrels``: trec_eval ordering, duplicate checks (vectorised).

Rows arrive as three columns (query id, doc id, score or grade) in file order, with the 1-based
line (or row) of each row for messages. Runs are usually already grouped by query and ranked, so
the run builder checks order in O(n) and sorts only what is out of order:

- queries are contiguous blocks: the blocks are permuted into byte order of the query id
  (interleaved queries get a stable sort by query first);
- within a query, a score increase marks the whole query for sorting; a group of tied scores whose
  doc ids are not in descending byte order is sorted on its own.

Duplicate documents within a query are found by sorting 64-bit keys built from the query index and
a hash of the doc id; colliding keys are then compared exactly, so a hash collision never causes a
false report.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from rankscope.data._source import Where
from rankscope.data.arrow import numpy_array, to_numpy
from rankscope.data.fingerprints import find_duplicate, pair_keys, remember
from rankscope.data.order import byte_key
from rankscope.data.qrels import Qrels
from rankscope.data.run import Run
from rankscope.errors import DuplicateError

IntArray = npt.NDArray[np.int64]
RowIndex = npt.NDArray[np.signedinteger[Any]]  # int32 or int64 row positions
StrArray: TypeAlias = Any  # a pyarrow string Array or ChunkedArray


def as_string_array(values: StrArray) -> pa.Array:
    """One contiguous ``string`` array (not ``large_string``, not chunked)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    if values.type != pa.string():
        values = values.cast(pa.string())
    return values


def _plain_strings(values: StrArray) -> StrArray:
    """``string`` typed, chunks kept (combining copies, so it is left to the end)."""
    if values.type == pa.string():
        return values
    return values.cast(pa.string())


def _at(lines: IntArray | None, row: int) -> int:
    return int(lines[row]) if lines is not None else row + 1


def check_ids(values: pa.Array, what: str, where: Where, lines: IntArray | None) -> None:
    """Refuse missing and empty ids (TREC files cannot hold them)."""
    if values.null_count:
        row = int(np.flatnonzero(to_numpy(values.is_null()))[0])
        raise where.error(f"missing {what}", at=_at(lines, row), hint=f"Give every row a {what}")
    if len(values) and pc.min(pc.binary_length(values)).as_py() == 0:
        lens = to_numpy(pc.binary_length(values))
        row = int(np.flatnonzero(lens == 0)[0])
        raise where.error(f"empty {what}", at=_at(lines, row), hint=f"Give every row a {what}")


# --------------------------------------------------------------------------- query grouping


def _index_type(n: int) -> type[np.signedinteger[Any]]:
    """int32 row indices when they fit: half the memory of int64 on big runs."""
    return np.int32 if n < 2**31 - 1 else np.int64


@dataclass(frozen=True, slots=True)
class QueryBlocks:
    """Query ids as runs of equal values: ``names[i]`` repeated ``lengths[i]`` times.

    Runs are usually grouped by query, so this is a few thousand strings instead of one per row.
    """

    names: list[str]
    lengths: IntArray

    @property
    def rows(self) -> int:
        return int(self.lengths.sum())

    @classmethod
    def of(cls, qids: StrArray) -> QueryBlocks:
        if isinstance(qids, pa.ChunkedArray):
            return cls.concat([cls.of(chunk) for chunk in qids.chunks])
        if len(qids) == 0:
            return cls([], np.zeros(0, dtype=np.int64))
        runs = pc.run_end_encode(qids)  # Arrow finds the runs (4x faster than comparing)
        ends = to_numpy(runs.run_ends).astype(np.int64)
        lengths = np.diff(ends, prepend=np.int64(0))
        return cls(runs.values.to_pylist(), lengths)

    @classmethod
    def concat(cls, parts: Sequence[QueryBlocks]) -> QueryBlocks:
        names: list[str] = []
        lengths: list[int] = []
        for part in parts:
            for name, length in zip(part.names, part.lengths.tolist(), strict=True):
                if names and names[-1] == name:
                    lengths[-1] += length
                else:
                    names.append(name)
                    lengths.append(length)
        return cls(names, np.asarray(lengths, dtype=np.int64))


class _Groups:
    """Query structure of rows; ``contiguous`` when each query's rows are one block."""

    def __init__(self, blocks: QueryBlocks) -> None:
        names, lengths = blocks.names, blocks.lengths
        n = blocks.rows
        unique = sorted(set(names), key=byte_key)
        rank_of = {q: i for i, q in enumerate(unique)}
        block_rank = np.fromiter((rank_of[q] for q in names), dtype=np.int32, count=len(names))
        self.query_ids: tuple[str, ...] = tuple(unique)
        self.contiguous = len(unique) == len(names)
        self.starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        self.row_query = np.repeat(block_rank, lengths)  # final query index of each row
        self.perm: RowIndex | None = None
        itype = _index_type(n)
        if not self.contiguous:
            # interleaved queries: a stable sort by query keeps file order within each
            self.perm = np.argsort(self.row_query, kind="stable").astype(itype)
            self.offsets = np.concatenate(
                [[0], np.cumsum(np.bincount(self.row_query, minlength=len(unique)))]
            ).astype(np.int64)
            return
        order = np.argsort(block_rank, kind="stable")
        new_lengths = lengths[order]
        self.offsets = np.concatenate([[0], np.cumsum(new_lengths)]).astype(np.int64)
        if not np.array_equal(order, np.arange(len(names))):
            shift = (self.starts[order] - self.offsets[:-1]).astype(itype)
            perm = np.repeat(shift, new_lengths)
            perm += np.arange(n, dtype=itype)
            self.perm = perm

    @classmethod
    def sorted_rows(cls, query_ids: tuple[str, ...], offsets: IntArray) -> _Groups:
        return cls(QueryBlocks(list(query_ids), np.diff(offsets).astype(np.int64)))


# --------------------------------------------------------------------------- ordering


def _cmp_trec(s1: float, d1: bytes, s2: float, d2: bytes) -> int:
    """trec_eval's ``comp_sim_docno``: score descending, then docno descending."""
    if s1 > s2:
        return -1
    if s1 < s2:
        return 1
    return (d2 > d1) - (d2 < d1)


def glibc_qsort_order(scores: list[float], docs: list[bytes]) -> list[int]:
    """The order glibc's ``qsort`` (a top-down merge sort) gives with trec_eval's comparator.

    trec_eval hands this sort the rows of a query in ascending docno order. The result only
    differs from a plain sort when scores contain NaN, which compares neither greater nor less
    than anything, so those rows fall back to the docno comparison wherever the merge meets them.
    """
    items = sorted(range(len(docs)), key=lambda i: docs[i])

    def msort(seq: list[int]) -> list[int]:
        if len(seq) <= 1:
            return seq
        mid = len(seq) // 2
        left, right = msort(seq[:mid]), msort(seq[mid:])
        out: list[int] = []
        i = j = 0
        while i < len(left) and j < len(right):
            a, b = left[i], right[j]
            if _cmp_trec(scores[a], docs[a], scores[b], docs[b]) <= 0:
                out.append(a)
                i += 1
            else:
                out.append(b)
                j += 1
        out.extend(left[i:])
        out.extend(right[j:])
        return out

    return msort(items)


def _in_query_fix(
    groups: _Groups, docs: StrArray, scores: npt.NDArray[np.float64]
) -> RowIndex | None:
    """Row order (in current positions) that puts every query in trec_eval order, or ``None``."""
    n = len(scores)
    if n < 2:
        return None
    rq = groups.row_query
    nq = len(groups.query_ids)
    same = rq[1:] == rq[:-1]
    s0, s1 = scores[:-1], scores[1:]
    bad_query = np.zeros(nq, dtype=bool)
    bad_query[rq[1:][same & (s0 < s1)]] = True  # a score increase: sort the whole query
    nan = np.isnan(scores)
    nan_query = np.zeros(nq, dtype=bool)
    if nan.any():
        nan_query[rq[nan]] = True
        bad_query |= nan_query
    tie_pos = np.flatnonzero(same & (s0 == s1))  # row i ties with row i + 1
    del same, s0, s1
    tie_rows = np.zeros(0, dtype=np.int64)
    tie_seg = np.zeros(0, dtype=np.int64)
    if len(tie_pos):
        left = docs.take(numpy_array(tie_pos))
        right = docs.take(numpy_array(tie_pos + 1))
        rising = pc.less(left, right)
        if isinstance(rising, pa.ChunkedArray):
            rising = rising.combine_chunks()
        rising_np = to_numpy(rising)
        # tie groups: maximal runs of consecutive tie positions; group g covers rows
        # tie_pos[first of g] .. tie_pos[last of g] + 1
        new_group = np.concatenate([[True], tie_pos[1:] != tie_pos[:-1] + 1])
        gid = np.cumsum(new_group) - 1
        gstart = tie_pos[new_group]
        bad_group = np.zeros(len(gstart), dtype=bool)
        bad_group[gid[rising_np]] = True
        keep = bad_group[gid] & ~bad_query[rq[tie_pos]]
        if keep.any():
            pos, g = tie_pos[keep], gid[keep]
            tie_rows = np.concatenate([pos, pos + 1])
            tie_seg = np.concatenate([gstart[g], gstart[g]])
            tie_rows, first = np.unique(tie_rows, return_index=True)
            tie_seg = tie_seg[first]
    plain_query = bad_query & ~nan_query
    if not plain_query.any() and not len(tie_rows) and not nan_query.any():
        return None
    fix = np.arange(n, dtype=_index_type(n))
    query_start = np.empty(nq, dtype=np.int64)
    query_start[rq[groups.starts]] = groups.starts
    query_end = np.empty(nq, dtype=np.int64)
    query_end[rq[groups.starts]] = np.append(groups.starts[1:], n)
    parts_pos = [tie_rows]
    parts_seg = [tie_seg]
    for q in np.flatnonzero(plain_query).tolist():
        rows = np.arange(query_start[q], query_end[q], dtype=np.int64)
        parts_pos.append(rows)
        parts_seg.append(np.full(len(rows), query_start[q], dtype=np.int64))
    pos = np.concatenate(parts_pos)
    if len(pos):
        seg = np.concatenate(parts_seg)
        order = np.argsort(pos, kind="stable")
        pos, seg = pos[order], seg[order]
        table = pa.table(
            {
                "seg": numpy_array(seg),
                "score": numpy_array(scores[pos]),
                "doc": docs.take(numpy_array(pos)),
            }
        )
        idx = to_numpy(
            pc.sort_indices(
                table,
                sort_keys=[("seg", "ascending"), ("score", "descending"), ("doc", "descending")],
            )
        )
        fix[pos] = pos[idx]
    for q in np.flatnonzero(nan_query).tolist():
        rows = np.arange(query_start[q], query_end[q], dtype=np.int64)
        names = [byte_key(d) for d in docs.take(numpy_array(rows)).to_pylist()]
        order = np.asarray(glibc_qsort_order(scores[rows].tolist(), names), dtype=np.int64)
        fix[rows] = rows[order]
    return fix


# --------------------------------------------------------------------------- builders

_PARALLEL_ROWS = 1 << 16  # below this a second thread costs more than it saves


def build_run(
    qids: StrArray | QueryBlocks,
    docs: StrArray,
    scores: npt.NDArray[np.float64],
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
    """
    if isinstance(qids, QueryBlocks):
        blocks = qids
        if any(not q for q in blocks.names):
            row = int(np.concatenate([[0], np.cumsum(blocks.lengths)])[blocks.names.index("")])
            raise where.error("empty query id", at=_at(lines, row), hint="Give every row one")
    else:
        q = _plain_strings(qids)
        check_ids(q, "query id", where, lines)
        blocks = QueryBlocks.of(q)
        del q
    d = _plain_strings(docs)
    s = np.ascontiguousarray(scores, dtype=np.float64)
    if not (blocks.rows == len(d) == len(s)):
        raise ValueError("columns differ in length")
    check_ids(d, "document id", where, lines)
    groups = _Groups(blocks)
    if not groups.contiguous:
        perm = groups.perm
        assert perm is not None
        take = numpy_array(perm)
        d, s = as_string_array(d).take(take), s[perm]
        lines = (lines[perm] if lines is not None else perm + 1).astype(np.int64)
        groups = _Groups.sorted_rows(groups.query_ids, groups.offsets)
    d = as_string_array(d)  # one buffer: gathers from a chunked array cost several times more
    nq = len(groups.query_ids)
    # The fingerprints (kept beside the Run, so that evaluation joins it to qrels without hashing
    # doc ids again) and the search for a repeated document run on a second thread while this
    # one finds the rows out of trec_eval order: numpy and Arrow release the GIL.
    row_keys: npt.NDArray[np.uint64] | None
    if len(d) >= _PARALLEL_ROWS:
        with ThreadPoolExecutor(max_workers=1) as pool:
            keyed = pool.submit(_keys_and_repeat, groups.row_query, d, nq)
            fix = _in_query_fix(groups, d, s)
            row_keys, dup = keyed.result()
    else:
        row_keys, dup = _keys_and_repeat(groups.row_query, d, nq)
        fix = _in_query_fix(groups, d, s)
    if dup is not None and keep_duplicates:
        row_keys = None  # the cache promises distinct pairs
    elif dup is not None:
        first, again = dup
        doc, qid = d[again].as_py(), groups.query_ids[int(groups.row_query[again])]
        raise where.error(
            f"duplicate document {doc!r} for query {qid!r} "
            f"(first seen on {where.unit} {_at(lines, first)})",
            at=_at(lines, again),
            hint="Each document may appear once per query; remove the repeat",
            cls=DuplicateError,
        )
    order = fix
    if groups.perm is not None:
        order = groups.perm if fix is None else fix[groups.perm]
    del fix
    groups.perm = None
    if order is not None:
        d = d.take(numpy_array(order))
        s = s[order]
        if row_keys is not None:
            row_keys = row_keys[order]
        del order
    run = Run(
        name=name,
        query_ids=groups.query_ids,
        offsets=groups.offsets,
        doc_ids=d,
        scores=s,
        source=source,
    )
    if row_keys is not None:
        remember(run, row_keys)
    return run


def _keys_and_repeat(
    row_query: npt.NDArray[np.integer], docs: pa.Array, num_queries: int
) -> tuple[npt.NDArray[np.uint64], tuple[int, int] | None]:
    keys = pair_keys(row_query, docs, num_queries)
    return keys, find_duplicate(row_query, docs, num_queries, keys)


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
    if isinstance(qids, QueryBlocks):
        names, block_lengths = qids.names, qids.lengths
    else:
        q = as_string_array(qids)
        check_ids(q, "query id", where, lines)
        enc = pc.dictionary_encode(q)
        names = enc.dictionary.to_pylist()
        block_lengths = None
    d = as_string_array(docs)
    g = np.ascontiguousarray(grades, dtype=np.int64)
    check_ids(d, "document id", where, lines)
    n = len(d)
    query_ids = sorted(set(names), key=byte_key)
    rank_of = {name: i for i, name in enumerate(query_ids)}
    name_rank = np.fromiter((rank_of[x] for x in names), dtype=np.int64, count=len(names))
    if block_lengths is not None:
        row_rank = np.repeat(name_rank, block_lengths)
    else:
        row_rank = name_rank[to_numpy(enc.indices)] if n else name_rank
    # Arrow sorts strings by their bytes, which is trec_eval's strcmp order.
    perm = to_numpy(
        pc.sort_indices(
            pa.table({"q": numpy_array(row_rank), "d": d}),
            sort_keys=[("q", "ascending"), ("d", "ascending")],
        )
    )
    rq = row_rank[perm]
    d_sorted = d.take(numpy_array(perm))
    if n > 1:
        same = (rq[1:] == rq[:-1]) & to_numpy(pc.equal(d_sorted.slice(0, n - 1), d_sorted.slice(1)))
        if same.any() and keep_first:  # the sort is stable: a repeat follows the first row
            keep = np.concatenate([[True], ~same])
            perm, rq, d_sorted = perm[keep], rq[keep], d_sorted.filter(numpy_array(keep))
        elif same.any():
            k = np.flatnonzero(same)
            line_no = lines if lines is not None else np.arange(1, n + 1, dtype=np.int64)
            la, lb = line_no[perm[k]], line_no[perm[k + 1]]
            i = int(np.argmin(np.maximum(la, lb)))
            rows = sorted((int(perm[k[i]]), int(perm[k[i] + 1])), key=lambda r: int(line_no[r]))
            first, again = rows
            raise where.error(
                f"duplicate judgment for document {d[again].as_py()!r} in query "
                f"{query_ids[int(row_rank[again])]!r} "
                f"(first seen on {where.unit} {_at(lines, first)})",
                at=_at(lines, again),
                hint="Each (query, document) pair may be judged once; remove the repeat "
                "(multi-judge qrels with judgment groups are not plain qrels)",
                cls=DuplicateError,
            )
    counts = np.bincount(rq, minlength=len(query_ids)) if n else np.zeros(0, dtype=np.int64)
    return Qrels(
        query_ids=tuple(query_ids),
        offsets=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        doc_ids=d_sorted,
        grades=g[perm],
        source=source,
    )
