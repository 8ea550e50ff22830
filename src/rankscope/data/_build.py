"""Order and check parsed columns into the columns of a ``Run`` / ``Qrels``: trec_eval ordering,
duplicate checks (vectorised). :func:`rankscope.data.run.build_run` and
:func:`rankscope.data.qrels.build_qrels` make the values from them.

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

Memory: every new page of a 10-million-row array is cleared by the kernel, which cost more CPU
than the work itself, so the builder makes each final array once and works in small reused
pieces otherwise. When queries are contiguous (the usual case) their blocks are copied in query
order straight into the final ids and scores, and the rows out of trec_eval order are then moved
in place (:func:`_build_by_blocks`); otherwise the rows are gathered through one index array.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, NamedTuple, NoReturn, TypeAlias

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from rankscope.data import compute as pc  # not pyarrow.compute: 50 ms to import
from rankscope.data._source import Where
from rankscope.data.arrow import numpy_array, to_numpy
from rankscope.data.fingerprints import find_duplicate, pair_keys
from rankscope.data.order import byte_key
from rankscope.errors import DuplicateError

IntArray = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
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
    if len(values) and _has_empty(values):
        lens = to_numpy(pc.binary_length(values))
        row = int(np.flatnonzero(lens == 0)[0])
        raise where.error(f"empty {what}", at=_at(lines, row), hint=f"Give every row a {what}")


def _has_empty(values: StrArray) -> bool:
    """Whether a string is empty: read from the offsets in steps (no array of lengths)."""
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    for chunk in chunks:
        if chunk.type != pa.string() or chunk.offset:
            if len(chunk) and pc.min(pc.binary_length(chunk)).as_py() == 0:
                return True
            continue
        offs = np.frombuffer(chunk.buffers()[1], dtype=np.int32)[: len(chunk) + 1]
        for a in range(0, len(chunk), _GATHER_ROWS):
            part = offs[a : a + _GATHER_ROWS + 1]
            if part.shape[0] > 1 and bool(np.any(part[1:] == part[:-1])):
                return True
    return False


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
    """Query structure of rows; ``contiguous`` when each query's rows are one block.

    ``row_query`` (the final query index of each row, int32) and ``perm`` (the rows in query
    order, int32 when they fit) are made on first use: the block copy needs neither.
    """

    def __init__(self, blocks: QueryBlocks) -> None:
        names, lengths = blocks.names, blocks.lengths
        self.rows = n = blocks.rows
        unique = sorted(set(names), key=byte_key)
        rank_of = {q: i for i, q in enumerate(unique)}
        self.block_rank = np.fromiter((rank_of[q] for q in names), dtype=np.int32, count=len(names))
        self.lengths = lengths
        self.query_ids: tuple[str, ...] = tuple(unique)
        self.contiguous = len(unique) == len(names)
        self.starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        self._row_query: npt.NDArray[np.int32] | None = None
        self.perm: RowIndex | None = None
        self.block_order: IntArray | None = None  # the blocks in query order (contiguous)
        self.in_order = False
        if not self.contiguous:
            # interleaved queries: a stable sort by query keeps file order within each
            self.perm = np.argsort(self.row_query, kind="stable").astype(_index_type(n))
            self.offsets = np.concatenate(
                [[0], np.cumsum(np.bincount(self.row_query, minlength=len(unique)))]
            ).astype(np.int64)
            return
        self.block_order = np.argsort(self.block_rank, kind="stable")
        self.offsets = np.concatenate([[0], np.cumsum(lengths[self.block_order])]).astype(np.int64)
        self.in_order = bool(np.array_equal(self.block_order, np.arange(len(names))))

    @property
    def row_query(self) -> npt.NDArray[np.int32]:
        if self._row_query is None:
            self._row_query = np.repeat(self.block_rank, self.lengths)
        return self._row_query

    def block_perm(self) -> RowIndex | None:
        """The rows in query order (``None``: they are), contiguous blocks only."""
        if self.block_order is None or self.in_order:
            return self.perm
        order = self.block_order
        return _block_perm(
            self.starts[order], self.lengths[order], self.rows, _index_type(self.rows)
        )

    @classmethod
    def sorted_rows(cls, query_ids: tuple[str, ...], offsets: IntArray) -> _Groups:
        return cls(QueryBlocks(list(query_ids), np.diff(offsets).astype(np.int64)))

    def query_of(self, rows: IntArray) -> IntArray:
        """The final query index of file rows ``rows`` (contiguous only): from the blocks,
        without an array of query numbers per row."""
        block = np.searchsorted(self.starts, rows, side="right") - 1
        out: IntArray = self.block_rank[block].astype(np.int64)
        return out

    def query_starts(self) -> tuple[IntArray, IntArray]:
        """Per final query: its first and end file row (contiguous only)."""
        first = np.empty(len(self.query_ids), dtype=np.int64)
        first[self.block_rank] = self.starts
        assert self.block_order is not None
        return first, first + self.lengths[self.block_order]

    def same_query(self) -> npt.NDArray[np.bool_]:
        """Per pair of neighbouring file rows: both in one query (contiguous only)."""
        same = np.ones(max(self.rows - 1, 0), dtype=np.bool_)
        same[self.starts[1:] - 1] = False
        return same

    def position_in_order(self, rows: IntArray) -> IntArray:
        """Where file rows ``rows`` go once the blocks are in query order (contiguous only)."""
        q = self.query_of(rows)
        out: IntArray = rows - self.query_starts()[0][q] + self.offsets[:-1][q]
        return out


def _block_perm(
    starts: IntArray, lengths: IntArray, n: int, itype: type[np.signedinteger[Any]]
) -> RowIndex:
    """Rows ``starts[k] .. starts[k] + lengths[k]`` for every block ``k`` in turn, as one array:
    steps of one, with a jump at each block's first row, summed in place (no second array)."""
    keep = lengths > 0
    starts, lengths = starts[keep], lengths[keep]
    perm = np.ones(n, dtype=itype)
    if n == 0:
        return perm
    firsts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    jumps = starts.copy()  # from the last row of the block before to this block's first
    jumps[1:] -= starts[:-1] + lengths[:-1] - 1
    perm[firsts] = jumps
    np.cumsum(perm, out=perm)
    return perm


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


_FIX_ROWS = 1 << 15  # rows per step of the order check: its buffers stay small


def _in_query_fix(
    groups: _Groups, docs: StrArray, scores: npt.NDArray[np.float64]
) -> tuple[IntArray, IntArray] | None:
    """The moves (in current positions) that put every query in trec_eval order, as
    ``(rows, sources)``: row ``rows[i]`` takes the row now at ``sources[i]``; ``None`` when
    every query is in order already. Contiguous groups only, checked a few queries at a time
    (no query's moves reach another)."""
    ends = groups.starts + groups.lengths
    cuts = np.searchsorted(ends, np.arange(_FIX_ROWS, groups.rows, _FIX_ROWS), side="left") + 1
    bounds = [0, *pc.distinct(cuts).tolist(), len(groups.starts)]
    moved_to = [np.zeros(0, dtype=np.int64)]
    moved_from = [np.zeros(0, dtype=np.int64)]
    for k0, k1 in itertools.pairwise(bounds):
        if k1 <= k0:
            continue
        a, b = int(groups.starts[k0]), int(ends[k1 - 1])
        part = _Blocks(groups.starts[k0:k1] - a, groups.lengths[k0:k1], b - a)
        found = _fix_rows(part, docs.slice(a, b - a), scores[a:b])
        if found is not None:
            moved_to.append(found[0] + a)
            moved_from.append(found[1] + a)
    if len(moved_to) == 1:
        return None
    return np.concatenate(moved_to), np.concatenate(moved_from)


@dataclass(frozen=True, slots=True)
class _Blocks:
    """Consecutive rows in blocks, one query each: ``starts``, ``lengths``, ``rows`` in all."""

    starts: IntArray
    lengths: IntArray
    rows: int

    def query_of(self, rows: IntArray) -> IntArray:
        out: IntArray = np.searchsorted(self.starts, rows, side="right") - 1
        return out

    def same_query(self) -> npt.NDArray[np.bool_]:
        same = np.ones(max(self.rows - 1, 0), dtype=np.bool_)
        same[self.starts[1:] - 1] = False
        return same

    def query_starts(self) -> tuple[IntArray, IntArray]:
        return self.starts, self.starts + self.lengths


def _fix_rows(
    groups: _Blocks, docs: StrArray, scores: npt.NDArray[np.float64]
) -> tuple[IntArray, IntArray] | None:
    """:func:`_in_query_fix` for the rows of ``groups``."""
    n = len(scores)
    if n < 2:
        return None
    query_of = groups.query_of
    nq = len(groups.starts)
    same = groups.same_query()
    s0, s1 = scores[:-1], scores[1:]
    pair = np.less(s0, s1)  # one mask, reused below
    pair &= same
    bad_query = np.zeros(nq, dtype=bool)
    bad_query[query_of(np.flatnonzero(pair) + 1)] = True  # a score increase: sort the query
    nan_query = np.zeros(nq, dtype=bool)
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(np.sum(scores))
    if not math.isfinite(total):  # only then look for NaN row by row
        nan_rows = np.flatnonzero(np.isnan(scores))
        if nan_rows.shape[0]:
            nan_query[query_of(nan_rows)] = True
            bad_query |= nan_query
        del nan_rows
    np.equal(s0, s1, out=pair)
    pair &= same
    tie_pos = np.flatnonzero(pair)  # row i ties with row i + 1
    del same, s0, s1, pair
    tie_rows = np.zeros(0, dtype=np.int64)
    tie_seg = np.zeros(0, dtype=np.int64)
    if len(tie_pos):
        left = pc.take(docs, numpy_array(tie_pos))
        right = pc.take(docs, numpy_array(tie_pos + 1))
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
        keep = bad_group[gid] & ~bad_query[query_of(tie_pos)]
        if keep.any():
            pos, g = tie_pos[keep], gid[keep]
            tie_rows = np.concatenate([pos, pos + 1])
            tie_seg = np.concatenate([gstart[g], gstart[g]])
            tie_rows, first = np.unique(tie_rows, return_index=True)
            tie_seg = tie_seg[first]
    plain_query = bad_query & ~nan_query
    if not plain_query.any() and not len(tie_rows) and not nan_query.any():
        return None
    query_start, query_end = groups.query_starts()
    parts_pos = [tie_rows]
    parts_seg = [tie_seg]
    for q in np.flatnonzero(plain_query).tolist():
        rows = np.arange(query_start[q], query_end[q], dtype=np.int64)
        parts_pos.append(rows)
        parts_seg.append(np.full(len(rows), query_start[q], dtype=np.int64))
    pos = np.concatenate(parts_pos)
    moved_to = [np.zeros(0, dtype=np.int64)]
    moved_from = [np.zeros(0, dtype=np.int64)]
    if len(pos):
        seg = np.concatenate(parts_seg)
        order = np.argsort(pos, kind="stable")
        pos, seg = pos[order], seg[order]
        table = pa.table(
            {
                "seg": numpy_array(seg),
                "score": numpy_array(scores[pos]),
                "doc": pc.take(docs, numpy_array(pos)),
            }
        )
        idx = to_numpy(
            pc.sort_indices(
                table,
                sort_keys=[("seg", "ascending"), ("score", "descending"), ("doc", "descending")],
            )
        )
        moved_to.append(pos)
        moved_from.append(pos[idx])
    for q in np.flatnonzero(nan_query).tolist():
        rows = np.arange(query_start[q], query_end[q], dtype=np.int64)
        names = [byte_key(d) for d in pc.take(docs, numpy_array(rows)).to_pylist()]
        order = np.asarray(glibc_qsort_order(scores[rows].tolist(), names), dtype=np.int64)
        moved_to.append(rows)
        moved_from.append(rows[order])
    return np.concatenate(moved_to), np.concatenate(moved_from)


# --------------------------------------------------------------------------- builders

_PARALLEL_ROWS = 1 << 16  # below this a second thread costs more than it saves


class RunColumns(NamedTuple):
    """A run's columns in trec_eval order (the fields of a ``Run``), and the fingerprints of its
    (query, doc) pairs when they are all distinct (:func:`rankscope.data.fingerprints.remember`)."""

    query_ids: tuple[str, ...]
    offsets: IntArray
    doc_ids: pa.Array
    scores: Floats
    keys: npt.NDArray[np.uint64] | None


class QrelsColumns(NamedTuple):
    """Qrels' columns sorted by query, then doc id in byte order (the fields of a ``Qrels``)."""

    query_ids: tuple[str, ...]
    offsets: IntArray
    doc_ids: pa.Array
    grades: IntArray


def run_columns(
    qids: StrArray | QueryBlocks,
    docs: StrArray,
    scores: npt.NDArray[np.float64] | pa.ChunkedArray,
    *,
    where: Where,
    lines: IntArray | None = None,
    keep_duplicates: bool = False,
) -> RunColumns:
    """Group, order and check rows into a run's columns (scores already validated by the reader).

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
    d = _plain_strings(docs)  # chunks kept: the rows are gathered into one array once
    if not (blocks.rows == len(d) == len(scores)):
        raise ValueError("columns differ in length")
    check_ids(d, "document id", where, lines)
    groups = _Groups(blocks)
    if _copies_blocks(groups, d):
        return _build_by_blocks(groups, d, scores, where, lines, keep_duplicates)
    s = np.ascontiguousarray(_numpy(scores), dtype=np.float64)
    if not groups.contiguous:
        perm = groups.perm
        assert perm is not None
        d, s = as_string_array(pc.take(d, numpy_array(perm))), gather(s, perm)
        lines = (lines[perm] if lines is not None else perm + 1).astype(np.int64)
        groups = _Groups.sorted_rows(groups.query_ids, groups.offsets)
    nq = len(groups.query_ids)
    # The fingerprints (kept beside the Run, so that evaluation joins it to qrels without hashing
    # doc ids again) and the search for a repeated document run on a second thread while this
    # one finds the rows out of trec_eval order: numpy and Arrow release the GIL.
    row_keys: npt.NDArray[np.uint64] | None
    if len(d) >= _PARALLEL_ROWS:
        with ThreadPoolExecutor(max_workers=1) as pool:
            keyed = pool.submit(_keys_and_repeat, groups.row_query, d, nq)
            fixes = _in_query_fix(groups, d, s)
            row_keys, dup, spare = keyed.result()
    else:
        row_keys, dup, spare = _keys_and_repeat(groups.row_query, d, nq)
        fixes = _in_query_fix(groups, d, s)
    if dup is not None and keep_duplicates:
        row_keys = None  # the cache promises distinct pairs
    elif dup is not None:
        _refuse_repeat(dup, d, groups, where, lines)
    order = _final_order(groups, groups.block_perm(), fixes, len(s))
    del fixes
    if order is None:
        d = as_string_array(d)
    else:
        # Arrow gathers the ids (int32 indices as they are); the fingerprints go into the
        # spare buffer of the duplicate search and the scores into the buffer the fingerprints
        # leave: no new 10-million-row arrays.
        d = as_string_array(pc.take(d, numpy_array(order)))
        if row_keys is not None:
            in_file_order, row_keys = row_keys, gather(row_keys, order, out=spare)
            s = gather(s, order, out=in_file_order.view(np.float64))
            del in_file_order
        else:
            s = gather(s, order, out=spare.view(np.float64))
        del order
    return RunColumns(groups.query_ids, groups.offsets, d, s, row_keys)


def _numpy(values: Floats | pa.ChunkedArray | pa.Array) -> Floats:
    if isinstance(values, pa.ChunkedArray | pa.Array):
        return np.asarray(to_numpy(values), dtype=np.float64)
    return values


def _refuse_repeat(
    dup: tuple[int, int], d: StrArray, groups: _Groups, where: Where, lines: IntArray | None
) -> NoReturn:
    first, again = dup
    doc, qid = d[again].as_py(), groups.query_ids[int(groups.row_query[again])]
    raise where.error(
        f"duplicate document {doc!r} for query {qid!r} "
        f"(first seen on {where.unit} {_at(lines, first)})",
        at=_at(lines, again),
        hint="Each document may appear once per query; remove the repeat",
        cls=DuplicateError,
    )


# ------------------------------------------------------------------- the block copy
#
# Runs are written query by query: each query's rows are one block of the file. Copying the
# blocks in query order into the final arrays (ids, scores) and then moving the few rows out of
# trec_eval order in place makes the Run with one new array per column: no row permutation,
# no array of query numbers per file row, no gathered copy of a copy.

_BLOCK_ROWS = 16  # the least rows per query, on average, worth copying block by block


def _copies_blocks(groups: _Groups, d: StrArray) -> bool:
    """Whether the run is built by :func:`_build_by_blocks`: contiguous queries, not too many
    (a loop over many small blocks is slower than one gather by Arrow), plain strings whose
    bytes fit 32-bit offsets."""
    if not groups.contiguous or groups.rows == 0:
        return False
    if len(groups.block_rank) * _BLOCK_ROWS > max(groups.rows, 1 << 16):
        return False
    chunks = d.chunks if isinstance(d, pa.ChunkedArray) else [d]
    if any(c.type != pa.string() for c in chunks):
        return False
    return sum(_byte_span(c) for c in chunks) < (1 << 31)


def _byte_span(chunk: pa.Array) -> int:
    offs = _offsets(chunk)
    return int(offs[-1]) - int(offs[0]) if len(chunk) else 0


def _offsets(chunk: pa.Array) -> npt.NDArray[np.int32]:
    return np.frombuffer(chunk.buffers()[1], dtype=np.int32)[
        chunk.offset : chunk.offset + len(chunk) + 1
    ]


def _pieces(
    src: IntArray, count: IntArray, chunk_first: IntArray
) -> tuple[list[int], list[int], list[int], list[int]]:
    """Blocks (file rows ``src[k]`` onwards, ``count[k]`` of them, in final order) cut where
    chunks end: per piece its chunk, first and end row in that chunk, and first final row."""
    keep = count > 0
    src, count = src[keep], count[keep]
    dst = np.concatenate([[0], np.cumsum(count)[:-1]]).astype(np.int64)
    c0 = np.searchsorted(chunk_first, src, side="right") - 1
    c1 = np.searchsorted(chunk_first, src + count - 1, side="right") - 1
    if np.array_equal(c0, c1):  # no block crosses a chunk's end
        lo = src - chunk_first[c0]
        return c0.tolist(), lo.tolist(), (lo + count).tolist(), dst.tolist()
    span = c1 - c0 + 1
    k = np.repeat(np.arange(src.shape[0]), span)
    c = np.repeat(c0, span) + _positions_in(span)
    start = np.maximum(src[k], chunk_first[c])
    end = np.minimum(src[k] + count[k], chunk_first[c + 1])
    out_dst = dst[k] + (start - src[k])
    return (
        c.tolist(),
        (start - chunk_first[c]).tolist(),
        (end - chunk_first[c]).tolist(),
        (out_dst.tolist()),
    )


def _positions_in(counts: IntArray) -> IntArray:
    """``0 .. counts[k] - 1`` for every ``k`` in turn."""
    ends = np.cumsum(counts)
    return np.arange(int(ends[-1]) if ends.shape[0] else 0) - np.repeat(ends - counts, counts)


def _chunk_firsts(chunks: Sequence[Any]) -> IntArray:
    """The first row of every chunk, and the rows in all."""
    lengths = [len(c) for c in chunks]
    return np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]).astype(np.int64)


def _copy_strings(
    chunks: list[pa.Array], src: IntArray, count: IntArray, n: int
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.uint8]]:
    """The offsets and bytes of the rows of ``src``/``count`` blocks, in turn (new arrays)."""
    offs = [_offsets(c) for c in chunks]
    data = [
        np.frombuffer(c.buffers()[2], dtype=np.uint8)
        if c.buffers()[2] is not None
        else np.zeros(0, dtype=np.uint8)
        for c in chunks
    ]
    out_offs = np.empty(n + 1, dtype=np.int32)
    out_offs[0] = 0
    out_data = np.empty(sum(int(o[-1]) - int(o[0]) for o in offs), dtype=np.uint8)
    pos = 0
    for c, lo, hi, at in zip(*_pieces(src, count, _chunk_firsts(chunks)), strict=True):
        o = offs[c]
        b0, b1 = int(o[lo]), int(o[hi])
        out_data[pos : pos + b1 - b0] = data[c][b0:b1]
        np.subtract(o[lo + 1 : hi + 1], b0 - pos, out=out_offs[at + 1 : at + 1 + hi - lo])
        pos += b1 - b0
    return out_offs, out_data


def _copy_values(chunks: list[Floats], src: IntArray, count: IntArray, n: int) -> Floats:
    out = np.empty(n, dtype=np.float64)
    for c, lo, hi, at in zip(*_pieces(src, count, _chunk_firsts(chunks)), strict=True):
        out[at : at + hi - lo] = chunks[c][lo:hi]
    return out


def _build_by_blocks(
    groups: _Groups,
    d: StrArray,
    scores: Floats | pa.ChunkedArray | pa.Array,
    where: Where,
    lines: IntArray | None,
    keep_duplicates: bool,
) -> RunColumns:
    n = groups.rows
    assert groups.block_order is not None
    src = groups.starts[groups.block_order]
    count = groups.lengths[groups.block_order]
    chunks = d.chunks if isinstance(d, pa.ChunkedArray) else [d]
    offs, data = _copy_strings(chunks, src, count, n)
    docs = pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offs), pa.py_buffer(data)])
    if isinstance(scores, pa.ChunkedArray):
        score_chunks = [np.asarray(to_numpy(c), dtype=np.float64) for c in scores.chunks]
    else:
        score_chunks = [np.ascontiguousarray(_numpy(scores), dtype=np.float64)]
    s = _copy_values(score_chunks, src, count, n)
    del score_chunks
    ordered = _Groups.sorted_rows(groups.query_ids, groups.offsets)
    fixes = _in_query_fix(ordered, docs, s)
    if fixes is not None:
        _move_rows(offs, data, s, *fixes)  # in place: ``docs`` shows the moved rows
    keys = pair_keys(None, docs, len(groups.query_ids), offsets=groups.offsets)
    kept: npt.NDArray[np.uint64] | None = keys
    if _has_repeat(keys, groups.offsets):
        if keep_duplicates:
            kept = None  # the cache promises distinct pairs
        else:  # rare: say where, in the file's own order
            dup = find_duplicate(groups.row_query, d, len(groups.query_ids))
            assert dup is not None
            _refuse_repeat(dup, d, groups, where, lines)
    return RunColumns(groups.query_ids, groups.offsets, docs, s, kept)


def _move_rows(
    offs: npt.NDArray[np.int32],
    data: npt.NDArray[np.uint8],
    scores: Floats,
    rows: IntArray,
    sources: IntArray,
) -> None:
    """Row ``rows[i]`` takes the id (``offs``, ``data``) and score of row ``sources[i]``, in
    place: the moves permute rows within runs of rows that ``rows`` covers whole, so the ids
    of a run fill the bytes they filled before. A few runs at a time: small buffers."""
    order = np.argsort(rows, kind="stable")
    rows, sources = rows[order], sources[order]
    scores[rows] = scores[sources]
    # Cut where every move so far stays before the cut (whole runs on each side), about every
    # _GATHER_ROWS bytes: the byte positions of a step are 8 bytes per byte moved.
    closed = np.flatnonzero(np.maximum.accumulate(sources) <= rows)
    done = np.cumsum(offs[rows + 1] - offs[rows], dtype=np.int64)[closed]
    at = np.searchsorted(done, np.arange(_GATHER_ROWS, int(done[-1]), _GATHER_ROWS))
    cuts = pc.distinct(closed[np.minimum(at, closed.shape[0] - 1)] + 1).tolist()
    for lo, hi in itertools.pairwise([0, *cuts, rows.shape[0]]):
        if hi > lo:
            _move_ids(offs, data, rows[lo:hi], sources[lo:hi])


def _move_ids(
    offs: npt.NDArray[np.int32], data: npt.NDArray[np.uint8], rows: IntArray, sources: IntArray
) -> None:
    starts = offs[sources].astype(np.int64)
    lens = offs[sources + 1] - starts
    take = _byte_index(starts, lens)
    at = offs[rows].astype(np.int64)
    put = _byte_index(at, offs[rows + 1] - at)
    data[put] = data[take]
    offs[rows + 1] = put[np.cumsum(lens) - 1] + 1


def _byte_index(starts: IntArray, lens: IntArray) -> IntArray:
    """The byte positions of strings starting at ``starts``, ``lens`` long, one after another."""
    return np.repeat(starts, lens) + _positions_in(lens)


def _has_repeat(keys: npt.NDArray[np.uint64], offsets: IntArray) -> bool:
    """Whether two rows of one query have the same fingerprint: sorted a few queries at a time
    (a small buffer, reused) rather than a sorted copy of every key."""
    n = keys.shape[0]
    bounds = offsets[np.searchsorted(offsets, np.arange(0, n, _GATHER_ROWS), side="right") - 1]
    cuts = pc.distinct(np.concatenate([bounds, [n]])).tolist()
    scratch = np.empty(0, dtype=np.uint64)
    for a, b in itertools.pairwise(cuts):
        if scratch.shape[0] < b - a:
            scratch = np.empty(b - a, dtype=np.uint64)
        part = scratch[: b - a]
        part[:] = keys[a:b]
        part.sort()
        if bool(np.any(part[1:] == part[:-1])):
            return True
    return False


def _keys_and_repeat(
    row_query: npt.NDArray[np.integer], docs: StrArray, num_queries: int
) -> tuple[npt.NDArray[np.uint64], tuple[int, int] | None, npt.NDArray[np.uint64]]:
    """The rows' fingerprints, the first repeated (query, doc) pair, and the buffer the search
    sorted in (free for the caller to reuse)."""
    keys = pair_keys(row_query, docs, num_queries)
    spare = np.empty_like(keys)
    return keys, find_duplicate(row_query, docs, num_queries, keys, scratch=spare), spare


def _final_order(
    groups: _Groups, perm: RowIndex | None, fixes: tuple[IntArray, IntArray] | None, n: int
) -> RowIndex | None:
    """The rows in final order (query blocks in order, ``perm``, then each query in trec_eval
    order), built in the array of ``perm`` when there is one."""
    if fixes is None:
        return perm
    rows, sources = fixes
    if perm is None:
        order = np.arange(n, dtype=_index_type(n))
        order[rows] = sources
        return order
    perm[groups.position_in_order(rows)] = sources  # ours to change
    return perm


_GATHER_ROWS = 1 << 14  # rows per step: the index copy stays small and is reused


def gather(
    values: npt.NDArray[Any], index: RowIndex, out: npt.NDArray[Any] | None = None
) -> npt.NDArray[Any]:
    """``values[index]`` into ``out`` (a new array when ``None``), in steps: numpy turns int32
    indices into its own index type, a copy that stays small and reused step by step where
    one call would copy the whole index."""
    n = index.shape[0]
    if out is None:
        out = np.empty(n, dtype=values.dtype)
    for a in range(0, n, _GATHER_ROWS):
        np.take(values, index[a : a + _GATHER_ROWS], out=out[a : a + _GATHER_ROWS], mode="clip")
    return out


def qrels_columns(
    qids: StrArray | QueryBlocks,
    docs: StrArray,
    grades: npt.NDArray[np.int64],
    *,
    where: Where,
    lines: IntArray | None = None,
    keep_first: bool = False,
) -> QrelsColumns:
    """Sort rows into qrels' columns (query, then doc id in byte order), refusing a document
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
    d_sorted = pc.take(d, numpy_array(perm))
    if n > 1:
        same = (rq[1:] == rq[:-1]) & to_numpy(pc.equal(d_sorted.slice(0, n - 1), d_sorted.slice(1)))
        if same.any() and keep_first:  # the sort is stable: a repeat follows the first row
            keep = np.concatenate([[True], ~same])
            perm, rq, d_sorted = perm[keep], rq[keep], pc.filter(d_sorted, numpy_array(keep))
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
    return QrelsColumns(
        query_ids=tuple(query_ids),
        offsets=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        doc_ids=d_sorted,
        grades=g[perm],
    )
